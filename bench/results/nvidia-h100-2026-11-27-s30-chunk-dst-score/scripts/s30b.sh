#!/usr/bin/env bash
# Session 30 call b: traversal-only edge temps at their CSR position
# (dst_csr_rows) and, in the dst numbering, incoming edge ids taken from
# the CSR position (GraphArrays::dst_eid_is_identity). The whole CUDA
# pytest; memcheck and initcheck on the RGAT and HGT generated CUDA cases
# (given numbering) and on the layers' CUDA cases (dst numbering);
# back-to-back throughput of RGCN, RGAT and HGT on am, mag, wikikg2 and
# biokg: main before these (.devcmd/old, 3269013), this tree, and this
# tree with HECTOR_DST_EID_IDENTITY=0 (CSR rows only), interleaved; the
# harness's RGAT rows on am, mag and wikikg2 for old and new.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
cat $R/gpu.txt
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
GPU_BUILD_JOBS=10 gpu_build new . tests
wait
./build-new/bin/runtime_tests > $R/runtime.log 2>&1
echo "runtime_tests rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/runtime.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
gpu_with new timeout 200 python3 -m pytest -q -p no:cacheprovider tests/python -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -20
for tool in memcheck initcheck; do
  gpu_with new timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py tests/python/test_layers.py -k "cuda and (rgat or hgt) and not float64" > $R/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY' $R/san-$tool.log | tail -1) $(tail -1 $R/san-$tool.log) $(gpu_elapsed)"
done
TP="--tf32 --datasets am,mag,wikikg2,biokg --models rgcn,rgat,hgt --modes inference,training"
for round in 1 2; do
  for tag in old new off; do
    [ $round = 2 ] && [ $tag = off ] && continue
    if [ $tag = off ]; then
      HECTOR_DST_EID_IDENTITY=0 gpu_with new timeout 120 python3 -m hector.bench.throughput $TP --tag off >> $R/tp.jsonl 2>> $R/tp.err
    else
      gpu_with $tag timeout 120 python3 -m hector.bench.throughput $TP --tag $tag >> $R/tp.jsonl 2>> $R/tp.err
    fi
    echo "throughput $tag round $round rc=$? $(gpu_elapsed)"
  done
done
gpu_with new python3 -m hector.bench.compare $R/tp.jsonl --baseline old > $R/ab.txt 2>&1
cat $R/ab.txt
for tag in old new; do
  gpu_with $tag timeout 60 python3 -m hector.bench --tf32 --datasets am,mag,wikikg2 --models rgat --modes inference --systems hector-cr --out $R/bench-$tag --no-chart > $R/bench-$tag.log 2>&1
  echo "bench $tag rc=$? $(gpu_elapsed)"; grep -E "^\[" $R/bench-$tag.log | sed "s/^/$tag /"
done
echo "done $(gpu_elapsed)"

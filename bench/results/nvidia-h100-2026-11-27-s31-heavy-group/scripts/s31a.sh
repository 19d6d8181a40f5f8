#!/usr/bin/env bash
# Session 31 call a: branch heavy-group (heavy-row blocks of 512 threads
# for node rows with two or more edge loops, schedule `heavy_group`)
# against main (.devcmd/old, 40c02f0). templates_tests' CUDA cases; the
# whole CUDA pytest; memcheck in two parts (generated RGAT and HGT fp32
# cases, layers' RGAT-PyG and HGT-PyG cases) and initcheck on the
# generated RGAT and HGT cases; one round of throughput of RGCN, RGAT and
# HGT on am, mag, wikikg2 and biokg, old then new. Steps after the
# correctness ones are skipped when the call nears its limit.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
GPU_BUILD_JOBS=10 gpu_build new . tests
wait
./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED" $R/templates.log | head
gpu_with new timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -20
gpu_with new timeout 100 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and (rgat or hgt) and float32" > $R/san-memcheck-generated.log 2>&1
echo "memcheck generated rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-generated.log | tail -1) $(tail -1 $R/san-memcheck-generated.log) $(gpu_elapsed)"
gpu_with new timeout 80 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_layers.py -k "cuda and (rgat_pyg or hgt_pyg)" > $R/san-memcheck-layers.log 2>&1
echo "memcheck layers rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-layers.log | tail -1) $(tail -1 $R/san-memcheck-layers.log) $(gpu_elapsed)"
gpu_with new timeout 80 compute-sanitizer --tool initcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and (rgat or hgt) and float32" > $R/san-initcheck.log 2>&1
echo "initcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-initcheck.log | tail -1) $(tail -1 $R/san-initcheck.log) $(gpu_elapsed)"
TP="--tf32 --datasets am,mag,wikikg2,biokg --models rgcn,rgat,hgt --modes inference,training"
for tag in old new; do
  [ $(($(date +%s) - GPU_T0)) -gt 440 ] && { echo "skip throughput $tag $(gpu_elapsed)"; continue; }
  gpu_with $tag timeout 75 python3 -m hector.bench.throughput $TP --tag $tag >> $R/tp.jsonl 2>> $R/tp.err
  echo "throughput $tag rc=$? $(gpu_elapsed)"
done
echo "done $(gpu_elapsed)"

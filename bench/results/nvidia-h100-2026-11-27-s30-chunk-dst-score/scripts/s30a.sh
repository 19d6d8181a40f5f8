#!/usr/bin/env bash
# Session 30 call a: branch chunk-dst-score (RGAT's destination scores as
# one GEMM a chunk, `per_chunk`) on the GPU. templates_tests' CUDA cases;
# CUDA pytest's RGAT, kernel-array and inference cases; memcheck and
# initcheck on RGAT's generated CUDA cases (training and inference);
# back-to-back throughput of RGAT (inference, training) on the 8 datasets,
# main (.devcmd/old) against the branch, two interleaved rounds; the
# harness's RGAT rows on am, mag and wikikg2 for both; the branch's
# inference profile on am and mag.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
cat $R/gpu.txt
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
GPU_BUILD_JOBS=10 gpu_build new . tests
wait
./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED" $R/templates.log | head
gpu_with new timeout 200 python3 -m pytest -q -p no:cacheprovider tests/python -k "cuda and (rgat or kernel_arrays or without_grad or inference)" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -20
for tool in memcheck initcheck; do
  gpu_with new timeout 120 compute-sanitizer --tool $tool --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and rgat and float32" > $R/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY' $R/san-$tool.log | tail -1) $(tail -1 $R/san-$tool.log) $(gpu_elapsed)"
done
GPU_TP_TIMEOUT=150 gpu_throughput_ab old new 2 --tf32 --datasets aifb,mutag,bgs,biokg,am,fb15k,mag,wikikg2 --models rgat --modes inference,training > $R/ab.txt 2>&1
cat $R/ab.txt
for tag in old new; do
  gpu_with $tag timeout 150 python3 -m hector.bench --tf32 --datasets am,mag,wikikg2 --models rgat --modes inference,training --systems hector-cr --out $R/bench-$tag --no-chart > $R/bench-$tag.log 2>&1
  echo "bench $tag rc=$? $(gpu_elapsed)"; grep -E "^\[" $R/bench-$tag.log | sed "s/^/$tag /"
done
gpu_with new timeout 100 python3 -m hector.bench.profile --tf32 --datasets am,mag --models rgat --modes inference --systems hector-cr --rows 12 --out $R/profile > $R/profile.log 2>&1
echo "profile rc=$? $(gpu_elapsed)"
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 34 call a: branch combo (main b9ff87f + weighted-ring +
# narrow-broadcast-chain) against main (.devcmd/old). Correctness first:
# the whole CUDA pytest, templates_tests' summed CUDA cases, memcheck on
# the generated RGAT and HGT fp32 CUDA cases; then a throughput A/B of
# RGAT and HGT inference on am, mag, wikikg2 and biokg.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=10 gpu_build new . tests &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
wait
gpu_with new timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -20
timeout 60 ./build-new/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/*umm*' > $R/templates.log 2>&1
echo "templates summed rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
gpu_with new timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and (rgat or hgt) and float32" > $R/san-memcheck-generated.log 2>&1
echo "memcheck generated rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-generated.log | tail -1) $(tail -1 $R/san-memcheck-generated.log) $(gpu_elapsed)"
GPU_TP_DEADLINE=520 gpu_throughput_ab old new 2 --tf32 \
  --datasets am,mag,wikikg2,biokg --models rgat,hgt --modes inference
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 33 call h, on call g's machine and build (build-new): the whole
# CUDA pytest; templates_tests' CUDA cases when call g had no time left
# for them; memcheck on the summed, biased and output-part GEMM cases of
# templates_tests and on the generated RGCN and HGT fp32 CUDA cases.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start h
[ -x build-new/bin/templates_tests ] || GPU_BUILD_JOBS=16 gpu_build new . tests
gpu_with new timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -20
if [ "${TEMPLATES:-1}" = 1 ]; then
  timeout 170 ./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates.log 2>&1
  echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
fi
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/*umm*:Table/SegmentGemm.Cuda/*ias*:Table/SegmentGemm.Cuda/*art*' > $R/san-memcheck-templates.log 2>&1
echo "memcheck templates rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-templates.log | tail -1) $(grep -E '^\[  PASSED' $R/san-memcheck-templates.log) $(gpu_elapsed)"
gpu_with new timeout 100 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and (rgcn or hgt) and float32" > $R/san-memcheck-generated.log 2>&1
echo "memcheck generated rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-generated.log | tail -1) $(tail -1 $R/san-memcheck-generated.log) $(gpu_elapsed)"
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 29 call f: the final tree (the commits after call e refactor the
# passes and change no generated code) on the GPU: templates_tests' CUDA
# cases; the whole CUDA pytest; memcheck, racecheck and initcheck on the
# template's new cases (weight ids, head columns, FillRows); memcheck and
# initcheck on the inference cases of test_generated.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start f
GPU_BUILD_JOBS=16 gpu_build new . tests
./build-new/bin/templates_tests --gtest_filter='*Cuda*:FillRows*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED" $R/templates.log | head
NEW='Table/SegmentGemm.Cuda/weightIds*:Table/SegmentGemm.Cuda/headColumns*:Table/SegmentGemm.Cuda/headFlags*:FillRows.Cuda*'
for tool in memcheck racecheck initcheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter="$NEW" > $R/san-templates-$tool.log 2>&1
  echo "templates $tool rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $R/san-templates-$tool.log | tail -1) $(grep -E '^\[  PASSED' $R/san-templates-$tool.log) $(gpu_elapsed)"
done
gpu_with new timeout 330 python3 -m pytest -q -p no:cacheprovider tests/python -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -20
for tool in memcheck initcheck; do
  gpu_with new timeout 100 compute-sanitizer --tool $tool --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and without_grad and rgat and float32" > $R/san-$tool.log 2>&1
  echo "inference $tool rc=$? $(grep -E 'ERROR SUMMARY' $R/san-$tool.log | tail -1) $(tail -1 $R/san-$tool.log) $(gpu_elapsed)"
done
echo "done $(gpu_elapsed)"

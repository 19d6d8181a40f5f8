#!/usr/bin/env bash
# Session 37 call b: main 78d5459 (the dense-rows kernel, 4 warps x 3
# buffers) checked on the GPU: templates_tests' GEMM cases (the CUDA
# table, the dense cases bitwise against the tiled kernel, which calls it
# takes), memcheck, racecheck and initcheck on the dense cases, and the
# whole CUDA pytest (the generated RGCN layers run it for their root
# GEMM). Builds the bench variants too, for call c's harness run.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new . tests
timeout 120 ./build-new/bin/templates_tests \
  --gtest_filter='*dense*:*Dense*:Table/SegmentGemm.Cuda/*:SegmentGemmCuda*' \
  > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED|Failure" -A3 $R/templates.log | head -20
for tool in memcheck racecheck initcheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 \
    ./build-new/bin/templates_tests \
    --gtest_filter='Table/SegmentGemm.Cuda/dense*:SegmentGemmCuda.Dense*' \
    > $R/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-$tool.log | tail -1) $(gpu_elapsed)"
done
gpu_with new timeout 200 python3 -m pytest -q -p no:cacheprovider \
  tests/python -k cuda > $R/pytest.log 2>&1
echo "pytest cuda rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED" $R/pytest.log | head -20
echo "done $(gpu_elapsed)"

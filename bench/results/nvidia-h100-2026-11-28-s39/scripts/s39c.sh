#!/usr/bin/env bash
# Session 39 call c: a gated mix's rounding spelled out once for the tiled
# and the dense-rows kernel (call b's dense mix cases differed from the
# tiled kernel's in the last bit). The templates_tests dense and gated-mix
# cases (bitwise against the tiled kernel), memcheck on them; then issue
# 9's run from this tree.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new . tests
timeout 60 ./build-new/bin/templates_tests \
  --gtest_filter='*dense*:*Dense*:Table/SegmentGemm.Cuda/*ix*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED|Failure" -A4 $R/templates.log | head -20
S=/usr/local/cuda/bin/compute-sanitizer; command -v compute-sanitizer >/dev/null && S=compute-sanitizer
timeout 45 $S --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests \
  --gtest_filter='Table/SegmentGemm.Cuda/*ix*:SegmentGemmCuda.Dense*' > $R/san-memcheck-gemm.log 2>&1
echo "memcheck gemm rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-gemm.log | tail -1) $(gpu_elapsed)"
gpu_issue9_run new 330
echo "done $(gpu_elapsed)"

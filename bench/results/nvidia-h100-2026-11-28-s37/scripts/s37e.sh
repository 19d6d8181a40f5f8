#!/usr/bin/env bash
# Session 37 call e: the dense-rows kernel's exact products (products exact
# to fp32 when TF32 is not allowed: RGCN's root GEMM by default) and
# templates/CudaHost.h (the one check / capturing of TraversalCuda.h and
# LaunchGraphCache.h). templates_tests' GEMM and launch graph cases,
# memcheck on the dense cases, the whole CUDA pytest, bench_segment_gemm
# at am's rows with the kernel off and on, racecheck and initcheck.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start e
GPU_BUILD_JOBS=16 gpu_build new . tests
timeout 90 ./build-new/bin/templates_tests \
  --gtest_filter='*dense*:*Dense*:Table/SegmentGemm.Cuda/*:SegmentGemmCuda*:LaunchGraph*:LaunchKey*' \
  > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED|Failure" -A3 $R/templates.log | head -20
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 \
  ./build-new/bin/templates_tests \
  --gtest_filter='Table/SegmentGemm.Cuda/dense*:SegmentGemmCuda.Dense*' \
  > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(gpu_elapsed)"
gpu_with new timeout 120 python3 -m pytest -q -p no:cacheprovider \
  tests/python -k cuda > $R/pytest.log 2>&1
echo "pytest cuda rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED" $R/pytest.log | head -20
for env in HECTOR_GEMM_DENSE=0 HECTOR_GEMM_DENSE=1; do
  echo "$env $(env $env timeout 40 ./build-new/bin/bench_segment_gemm 1885136 64 2>&1 | grep -E '^linear|tf32 \+ bias' | tr '\n' ' ')"
done | tee $R/dense-exact.txt
echo "bench $(gpu_elapsed)"
for tool in racecheck initcheck; do
  timeout 40 compute-sanitizer --tool $tool --error-exitcode 99 \
    ./build-new/bin/templates_tests \
    --gtest_filter='Table/SegmentGemm.Cuda/denseExact*' \
    > $R/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-$tool.log | tail -1) $(gpu_elapsed)"
done
echo "done $(gpu_elapsed)"

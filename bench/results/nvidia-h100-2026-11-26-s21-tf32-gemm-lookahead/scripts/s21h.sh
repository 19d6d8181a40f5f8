#!/usr/bin/env bash
# Session 21 call h: the final tree (a21d9ac): the GEMM table on the GPU
# with the new runs-of-tiles cases, memcheck and racecheck on them, CUDA
# pytest, the harness with TF32 (hector, hector-cr).
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start h
GPU_BUILD_JOBS=16 gpu_build new . tests
./build-new/bin/templates_tests --gtest_filter='Table/SegmentGemm*' > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
timeout 80 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/*RunsOfTiles*' > $R/san-memcheck-gemm.log 2>&1
echo "memcheck gemm rc=$? $(tail -1 $R/san-memcheck-gemm.log) $(gpu_elapsed)"
timeout 80 compute-sanitizer --tool racecheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/mmaRunsOfTilesSegPtr*' > $R/san-racecheck-gemm.log 2>&1
echo "racecheck gemm rc=$? $(tail -1 $R/san-racecheck-gemm.log) $(gpu_elapsed)"
gpu_with new timeout 120 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_with new timeout 150 python3 -m hector.bench --tf32 --systems hector,hector-cr --models rgat,rgcn,hgt --case-timeout 20 --no-chart --out $R/harness > $R/harness.log 2>&1
echo "harness rc=$? $(gpu_elapsed)"
echo "done $(gpu_elapsed)"

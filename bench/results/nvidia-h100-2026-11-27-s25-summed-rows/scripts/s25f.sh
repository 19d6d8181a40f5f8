#!/usr/bin/env bash
# Session 25 call f: the final summed-rows kernel: every template test
# (tensor cores on; the summed cases with them off), memcheck and
# racecheck of the summed cases, the CUDA pytest suite (the tensor-core
# kernel's tile loop changed for every call).
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start f
GPU_BUILD_JOBS=16 gpu_build new . tests
./build-new/bin/templates_tests > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED" $R/templates.log | head
HECTOR_GEMM_MMA=0 ./build-new/bin/templates_tests --gtest_filter='*ummed*' > $R/templates-nomma.log 2>&1; echo "templates nomma rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates-nomma.log | head -2 | tr '\n' ' ')"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='*ummed*:*mmaTf32SegPtr*:*mmaSmallest*' > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(gpu_elapsed)"
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='*Cuda/summed*' > $R/san-racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' $R/san-racecheck.log | tail -1) $(gpu_elapsed)"
timeout 120 compute-sanitizer --tool synccheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='*Cuda/summed*' > $R/san-synccheck.log 2>&1
echo "synccheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-synccheck.log | tail -1) $(gpu_elapsed)"
gpu_with new timeout 240 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
echo "done $(gpu_elapsed)"

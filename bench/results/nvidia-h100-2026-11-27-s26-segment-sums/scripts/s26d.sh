#!/usr/bin/env bash
# Session 26 call d: the whole CUDA pytest (no -x) from main, with
# test_generated's outputs-then-saved check comparing to rounding (call a
# stopped at its first failure there).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 300 python3 -m pytest tests/python -q -p no:cacheprovider -k "cuda or built_variants" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED" $R/pytest.log | head
echo "done $(gpu_elapsed)"

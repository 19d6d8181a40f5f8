#!/usr/bin/env bash
# Session 42 call d: issue 9's run on this H200 from main 8271f02 (the
# bias fill a word a thread, perf-notes section 96; the sorted score dots,
# section 97), every system but pyg-hgt-compile.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new .
gpu_issue9_run new 320
echo "done $(gpu_elapsed)"

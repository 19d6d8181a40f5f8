#!/usr/bin/env bash
# Session 36 call d: issue 9's run from main 7aff3be (the launch graph
# cache on), every Hector system and every baseline but pyg-hgt-compile,
# --tf32, all 8 datasets.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new .
gpu_issue9_run new 420
echo "done $(gpu_elapsed)"

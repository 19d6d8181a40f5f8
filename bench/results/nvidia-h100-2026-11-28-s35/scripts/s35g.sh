#!/usr/bin/env bash
# Session 35 call g, on call f's machine (its host's smallest training step
# took 0.249 ms; call d's 0.373): issue 9's run again from main 462e68a
# (call f's build-new, the bench variants added), every Hector system and
# every baseline but pyg-hgt-compile, --tf32, all 8 datasets.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start g
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new .
gpu_issue9_run new 420
echo "done $(gpu_elapsed)"

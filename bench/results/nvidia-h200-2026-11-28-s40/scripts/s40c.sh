#!/usr/bin/env bash
# Session 40 call c: issue 9's run from this tree on the H200 (no H100 was
# lent this session): every Hector system and every baseline but
# pyg-hgt-compile, --tf32, all 8 datasets. The build is call b's when the
# machine is still warm.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new . tests
gpu_issue9_run new 420
echo "done $(gpu_elapsed)"

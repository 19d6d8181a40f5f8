#!/usr/bin/env bash
# Session 37 call c: issue 9's run from main 78d5459 (the dense-rows
# kernel for RGCN's root GEMM), every Hector system and every baseline but
# pyg-hgt-compile, --tf32, all 8 datasets; on call b's build when the
# machine kept it, else built here.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
if [ -f build-new/lib/libhector_rgcn_pyg_u.so ]; then
  echo "call b's build-new kept"
else
  GPU_BUILD_JOBS=16 gpu_build new .
fi
gpu_issue9_run new 430
echo "done $(gpu_elapsed)"

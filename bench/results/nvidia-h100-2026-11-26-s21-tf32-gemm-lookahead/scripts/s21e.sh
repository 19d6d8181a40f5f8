#!/usr/bin/env bash
# Session 21 call e: the harness at the final tree (0580871) with TF32
# (the issue allows it within 1e-3 of the fp64 interpreter): hector and
# the C/R ablation variants, 8 datasets. Reuses call d's build.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start e
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 480 python3 -m hector.bench --tf32 --systems hector,hector-u,hector-c,hector-r,hector-cr --models rgat,rgcn,hgt --case-timeout 20 --no-chart --out $R/harness > $R/harness.log 2>&1
echo "harness rc=$? $(gpu_elapsed)"
echo "done $(gpu_elapsed)"

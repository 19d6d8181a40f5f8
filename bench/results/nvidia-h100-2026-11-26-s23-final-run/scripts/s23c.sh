#!/usr/bin/env bash
# Session 23 call c: the Hector half of issue 9's run from main (the tree
# the issue closes on): hector and the ablation systems with --tf32.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start c
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build final .
gpu_with final timeout "$1" python3 -m hector.bench --tf32 \
  --systems hector,hector-u,hector-c,hector-r,hector-cr \
  --models rgcn,rgat,hgt --case-timeout 20 --no-chart --out $R/harness > $R/harness.log 2>&1
echo "harness rc=$? $(grep -c '^\[' $R/harness.log) records $(gpu_elapsed)"
echo "done $(gpu_elapsed)"

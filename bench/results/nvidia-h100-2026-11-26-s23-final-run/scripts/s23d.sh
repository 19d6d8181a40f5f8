#!/usr/bin/env bash
# Session 23 call d: issue 9's run from main on one host: every Hector
# system and every baseline but pyg-hgt-compile (whose compilations take
# minutes; its s22 records are merged in), --tf32, all 8 datasets.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start d
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build final .
done_list=$(ls .devcmd/s23done/*.jsonl 2>/dev/null | paste -sd, -)
gpu_with final timeout "$1" python3 -m hector.bench --tf32 \
  --systems pyg-rgcn,pyg-fastrgcn,segmm-rgcn,pyg-rgat,pyg-rgat-compile,pyg-hgt,hector,hector-u,hector-c,hector-r,hector-cr \
  --models rgcn,rgat,hgt --case-timeout 20 --prepare-timeout 200 --no-chart \
  ${done_list:+--skip-done "$done_list"} --out $R/harness > $R/harness.log 2>&1
echo "harness rc=$? $(grep -c '^\[' $R/harness.log) records $(gpu_elapsed)"
grep '^\[' $R/harness.log | tail -3 | cut -c1-120
echo "done $(gpu_elapsed)"

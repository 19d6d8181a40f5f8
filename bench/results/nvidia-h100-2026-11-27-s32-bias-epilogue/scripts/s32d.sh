#!/usr/bin/env bash
# Session 32 call d: issue 9's run from this tree (main d568c27: section 71
# on section 68, the bias pairs loaded first): every Hector system and every baseline but pyg-hgt-compile,
# --tf32, all 8 datasets (merged later with session 22's pyg-hgt-compile
# records, as in sessions 24 and 26).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 420 python3 -m hector.bench --tf32 \
  --systems pyg-rgcn,pyg-fastrgcn,segmm-rgcn,pyg-rgat,pyg-rgat-compile,pyg-hgt,hector,hector-u,hector-c,hector-r,hector-cr \
  --models rgcn,rgat,hgt --case-timeout 20 --prepare-timeout 200 --no-chart \
  --out $R/harness > $R/harness.log 2>&1
echo "harness rc=$? $(grep -c '^\[' $R/harness.log) records $(gpu_elapsed)"
grep -E 'Geometric' $R/harness/table.md | head -8
echo "done $(gpu_elapsed)"

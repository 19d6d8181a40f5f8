#!/usr/bin/env bash
# Session 43 call c: issue 9's run on this H200 from main 9ef305c (the
# lean dot kernel, perf-notes section 99), every system but
# pyg-hgt-compile; then, with the time left, where RGAT's and HGT's
# inference steps spend their time (kernel tables, hector-cr) and Nsight
# Compute on their softmax traversals (am and mag).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new .
gpu_issue9_run new 320
gpu_with new timeout 60 python3 -m hector.bench.profile --tf32 \
  --datasets am,mag,wikikg2 --models rgat,hgt --systems hector-cr \
  --modes inference --steps 3 --warmup 1 --rows 12 \
  --out $R/profile > $R/profile.log 2>&1
echo "profile rc=$? $(gpu_elapsed)"
for c in "hgt am" "hgt mag" "rgat mag"; do
  set -- $c
  [ $(($(date +%s) - GPU_T0)) -gt 520 ] && { echo "skip ncu $1 $2"; continue; }
  gpu_ncu_step new "ncu-$1-$2" 'inference_trav' 3 "$2" "$1" 40
done
echo "done $(gpu_elapsed)"

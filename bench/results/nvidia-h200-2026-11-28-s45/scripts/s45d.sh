#!/usr/bin/env bash
# Session 45, call d: main 8c3ba99; s45d_state.py on mag and am, with
# nvidia-smi logging clocks, power and throttle reasons every 200 ms.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build main .
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv,noheader -lms 200 > $R/smi.csv 2>&1 &
SMI=$!
for ds in mag am; do
  gpu_with main timeout 150 python3 \
    bench/results/nvidia-h200-2026-11-28-s45/scripts/s45d_state.py $ds \
    2>$R/state-$ds.err | tee $R/state-$ds.jsonl
  echo "state $ds rc=$? $(gpu_elapsed)"
done
kill $SMI
cut -d, -f2,3,6 $R/smi.csv | sort | uniq -c | sort -rn | head -5
echo "done $(gpu_elapsed)"

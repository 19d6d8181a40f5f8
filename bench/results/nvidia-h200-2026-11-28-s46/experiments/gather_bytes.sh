#!/usr/bin/env bash
# Built in session 46 for the next session's device time (not run): the
# gather-bytes probe (experiments/gather_bytes.cu) on the synthetic am,
# mag and wikikg2 graphs, with four blocks an SM (the summed GEMM's) and
# with occupancy left to the registers. No CMake build: nvcc alone, and
# dump_graph.py (torch and hector.datasets) for the graphs. About a
# minute after the machine starts. bench/gemm's headers (BenchGraph.h,
# BenchTiming.h) are found from the repository root (-I.).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start gather
E=bench/results/nvidia-h200-2026-11-28-s46/experiments
nvcc -O3 -std=c++17 -arch=sm_90 -I. $E/gather_bytes.cu -o /tmp/gather_bytes \
  > $R/nvcc.log 2>&1 || { cat $R/nvcc.log; exit 1; }
for ds in am mag wikikg2; do
  PYTHONPATH="$PWD/runtime/python" python3 bench/gemm/dump_graph.py $ds \
    /tmp/$ds.bin > $R/dump-$ds.log 2>&1
  for pinned in 4 0; do
    echo "$ds blocks/SM pinned $pinned: $(timeout 120 /tmp/gather_bytes \
      /tmp/$ds.bin $pinned 2>&1)" | tee -a $R/gather.txt
  done
done
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 25 call d: Nsight Compute on the summed-rows GEMM (cap 16,
# destination blocks of 131072) on am and mag: DRAM bytes, L2 hit rate,
# occupancy, stall reasons.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start d
GPU_BUILD_JOBS=16 gpu_build new .
for ds in am mag; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > /dev/null 2>&1
  timeout 200 ncu --launch-skip 1 --launch-count 1 --kernel-name regex:linearMmaKernel --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats ./build-new/bin/bench_summed_rows /tmp/$ds.bin 64 16 131072 > $R/ncu-$ds.txt 2>&1
  echo "== $ds rc=$? $(gpu_elapsed)"
  grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Hit|L1/TEX Hit|Achieved Occupancy|Theoretical Occupancy|Registers Per|Shared Memory Configuration Size|Dynamic Shared|Block Limit|Stall|Warp Cycles Per Issued|Issued Warp|Eligible|dram__bytes|Mem Busy|Max Bandwidth|One or More" $R/ncu-$ds.txt | head -40
done
echo "done $(gpu_elapsed)"

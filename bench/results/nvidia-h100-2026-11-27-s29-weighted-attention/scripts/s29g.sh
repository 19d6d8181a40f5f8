#!/usr/bin/env bash
# Session 29 call g: Nsight Compute on the inference program's softmax
# traversal (inference_trav_3, its warp launch and its heavy launch) on
# mag and am: what its time is (perf-notes 65 "What is left").
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start g
S=bench/results/nvidia-h100-2026-11-27-s29-weighted-attention/scripts
GPU_BUILD_JOBS=16 gpu_build new .
for ds in mag am; do
  gpu_with new timeout 150 ncu --launch-skip 2 --launch-count 2 --kernel-name regex:inference_trav_3 --set full \
    python3 $S/softmax_case.py $ds 2 > $R/ncu-$ds.txt 2>&1
  echo "ncu $ds rc=$? $(gpu_elapsed)"
  grep -E "inference_trav_3|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Size|Grid Size|Warp Cycles Per Issued|Issued Warp|Executed Ipc|L1/TEX Hit|L2 Hit|Stall" $R/ncu-$ds.txt | sed -E 's/ +/ /g' | head -60
done
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 30 call d: Nsight Compute times and DRAM bytes of every launch of
# RGAT-PyG's inference program on mag and am (this tree, second of two
# runs): which of the small GEMMs (weight products, pair and chunk scores)
# cost what, against the summed GEMM and the softmax traversal.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
S=bench/results/nvidia-h100-2026-11-27-s29-weighted-attention/scripts
GPU_BUILD_JOBS=16 gpu_build new .
for ds in mag am; do
  gpu_with new timeout 100 ncu --launch-skip 8 --launch-count 8 --kernel-name regex:"linearDot|linearMma|inference_trav|fillRows" \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size \
    python3 $S/softmax_case.py $ds 2 > $R/ncu-$ds.txt 2>&1
  echo "ncu $ds rc=$? $(gpu_elapsed)"
  grep -E "^  [a-zA-Z_].*\(|gpu__time_duration|dram__bytes|launch__grid" $R/ncu-$ds.txt | sed -E 's/ +/ /g' | cut -c1-140
done
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 35 call e: where HGT-PyG's am inference kernels lose to DRAM
# bandwidth. Nsight Compute (speed of light, memory workload, occupancy,
# warp states, launch stats) on one step's kqv projection, per-chunk q
# GEMM, softmax traversal (warp launch), summed v GEMM and out_lin with
# the gated skip, under hector.bench.throughput (`hector`, am, one
# warm-up step, then the profiled step).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start e
GPU_BUILD_JOBS=16 gpu_build new .
ncu --version | tail -1
# Each step launches 4 linearMmaKernel and 2 inference_trav_2 (heavy and
# warp rows): skip the warm-up step's 6.
gpu_with new timeout 300 ncu --clock-control none \
  --kernel-name regex:"linearMmaKernel|inference_trav_2" \
  --launch-skip 6 --launch-count 6 --section SpeedOfLight \
  --section Occupancy --section WarpStateStats --section SchedulerStats \
  --section MemoryWorkloadAnalysis --section LaunchStats \
  -o $R/hgt-am python3 -m hector.bench.throughput --tf32 --datasets am \
  --models hgt --modes inference --systems hector --steps 1 --warmup 1 \
  --tag ncu > $R/ncu-run.log 2>&1
echo "ncu rc=$? $(gpu_elapsed)"
tail -3 $R/ncu-run.log
ncu -i $R/hgt-am.ncu-rep --page details > $R/ncu-details.txt 2>&1
grep -E "^  [a-z_]*.*\(|Duration|DRAM Throughput|Memory Throughput|L2 Hit|L1/TEX Hit|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Limit|Warp Cycles Per Issued|Issued Warp|No Eligible|Grid Size" $R/ncu-details.txt | cut -c1-120 | head -90
echo "done $(gpu_elapsed)"

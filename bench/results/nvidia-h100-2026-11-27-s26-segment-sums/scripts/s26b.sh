#!/usr/bin/env bash
# Session 26 call b: issue 9's run from main (RGCN's forward as two GEMMs):
# every Hector system and every baseline but pyg-hgt-compile, --tf32, all
# 8 datasets; then Nsight Compute's sections on bench_summed_rows' two
# calls on am (root GEMM, summed GEMM), to see what bounds them.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 340 python3 -m hector.bench --tf32 \
  --systems pyg-rgcn,pyg-fastrgcn,segmm-rgcn,pyg-rgat,pyg-rgat-compile,pyg-hgt,hector,hector-u,hector-c,hector-r,hector-cr \
  --models rgcn,rgat,hgt --case-timeout 20 --prepare-timeout 200 --no-chart \
  --out $R/harness > $R/harness.log 2>&1
echo "harness rc=$? $(grep -c '^\[' $R/harness.log) records $(gpu_elapsed)"
grep -E 'Geometric' $R/harness/table.md | head -8
gpu_with new python3 bench/gemm/dump_graph.py am /tmp/am.bin > /dev/null 2>&1
timeout 90 ncu --launch-count 2 --kernel-name regex:linearMmaKernel \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
  --section Occupancy --section SchedulerStats --section LaunchStats \
  ./build-new/bin/bench_summed_rows /tmp/am.bin 64 32 0 > $R/ncu-am.txt 2>&1
echo "ncu rc=$? $(gpu_elapsed)"
grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued|Issued Warp|No Eligible|L2 Hit|Block Limit" $R/ncu-am.txt | sed -E 's/ +/ /g' | head -40
echo "done $(gpu_elapsed)"

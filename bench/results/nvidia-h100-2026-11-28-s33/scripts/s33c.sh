#!/usr/bin/env bash
# Session 33 call c: Nsight Compute on the summed GEMM of bench_summed_rows
# (am, cap 32, rows in relation order): warp states, and the stall samples
# by source line, to find what a tile's 26 us go to (call b: the call is
# as slow with its sources read in order, and 8% faster without atomics).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new python3 bench/gemm/dump_graph.py am /tmp/am.bin > /dev/null 2>&1
ncu --version | tail -1
# Launch order of linearMmaKernel in `bench_summed_rows G 64 32 0`: root,
# weighted, root, summed, ...: skip 3.
timeout 240 ncu --clock-control none --kernel-name regex:linearMmaKernel \
  --launch-skip 3 --launch-count 1 --section SpeedOfLight \
  --section Occupancy --section WarpStateStats --section SchedulerStats \
  --section MemoryWorkloadAnalysis --section SourceCounters \
  --import-source yes -o $R/summed-am ./build-new/bin/bench_summed_rows \
  /tmp/am.bin 64 32 0 > $R/ncu-run.log 2>&1
echo "ncu rc=$? $(gpu_elapsed)"
ncu -i $R/summed-am.ncu-rep --page details > $R/ncu-details.txt 2>&1
grep -E "Duration|Throughput|Occupancy|Registers|Stall|Warp Cycles|Eligible|Issued|Hit Rate|No Eligible|Active Warps" $R/ncu-details.txt | head -40
ncu -i $R/summed-am.ncu-rep --page source --csv --print-source cuda > $R/ncu-source-cuda.csv 2> $R/ncu-source.err
echo "source page rc=$? lines $(wc -l < $R/ncu-source-cuda.csv)"
head -3 $R/ncu-source-cuda.csv | cut -c1-600
ncu -i $R/summed-am.ncu-rep --page raw --csv > $R/ncu-raw.csv 2>&1
grep -o "smsp__pcsamp_warps_issue_stalled_[a-z_]*" $R/ncu-raw.csv | sort -u | head -3
echo "done $(gpu_elapsed)"

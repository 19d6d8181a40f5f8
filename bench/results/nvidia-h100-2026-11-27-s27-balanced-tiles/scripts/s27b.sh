#!/usr/bin/env bash
# Session 27 call b: the balanced summed GEMM's row cost (4 to 12 entries
# a row) and waves of blocks (1, 2) on bench_summed_rows (am, mag,
# wikikg2), and Nsight Compute's full set with source counters on am's
# root GEMM (x root + bias), to see where its warps wait.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
GPU_BUILD_JOBS=16 gpu_build new .
for ds in am mag wikikg2; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > /dev/null 2>&1
  for cfg in "4 1" "6 1" "8 1" "12 1" "4 2" "8 2" "16 1" "8 1" "4 1"; do
    set -- $cfg
    HECTOR_SUM_ROW_COST=$1 HECTOR_MMA_WAVES=$2 timeout 60 ./build-new/bin/bench_summed_rows /tmp/$ds.bin 64 32 0 2>&1 | grep "^cap" | sed -E "s/^/cost $1 waves $2 /; s/ +/ /g" >> $R/summed-$ds.txt
  done
  echo "== $ds $(gpu_elapsed)"; cut -c1-24,79-175 $R/summed-$ds.txt
done
timeout 150 ncu --launch-count 1 --kernel-name regex:linearMmaKernel --set full \
  --import-source no --print-details all \
  ./build-new/bin/bench_summed_rows /tmp/am.bin 64 32 0 > $R/ncu-root-am.txt 2>&1
echo "ncu rc=$? $(gpu_elapsed)"
grep -E "Duration|DRAM Throughput|Stall|Warp Cycles Per Issued|Issued Warp|Executed Ipc|Instructions|L2 Hit|Long Scoreboard|Barrier|MIO|LG Throttle|Short Scoreboard|Wait|Not Selected|Math Pipe" $R/ncu-root-am.txt | sed -E 's/ +/ /g' | head -60
echo "done $(gpu_elapsed)"

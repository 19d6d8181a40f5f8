#!/usr/bin/env bash
# Session 25 call g: bench_summed_rows at the final kernel on am, mag and
# wikikg2 (caps 16, 32, 64, none; destination blocks off and 131072), and
# Nsight Compute metrics of its two calls (root GEMM, summed GEMM) on am
# and mag at cap 32.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start g
GPU_BUILD_JOBS=16 gpu_build new . tests
M=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio
for ds in am mag wikikg2; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > /dev/null 2>&1
  timeout 150 ./build-new/bin/bench_summed_rows /tmp/$ds.bin > $R/summed-$ds.txt 2>&1
  echo "== $ds rc=$? $(gpu_elapsed)"; cat $R/summed-$ds.txt
  if [ $ds != wikikg2 ]; then
    timeout 100 ncu --launch-count 2 --kernel-name regex:linearMmaKernel --metrics $M ./build-new/bin/bench_summed_rows /tmp/$ds.bin 64 32 0 > $R/ncu-$ds.txt 2>&1
    echo "ncu $ds rc=$?"; grep -E "linearMmaKernel|dram__|gpu__time|lts__|warps_active|registers|occupancy_limit|stalled" $R/ncu-$ds.txt | sed -E 's/ +/ /g' | cut -c1-150
  fi
done
echo "done $(gpu_elapsed)"

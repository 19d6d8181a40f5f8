#!/usr/bin/env bash
# Session 33 call d: the summed staging's leaner loop (the row's end in a
# register, the zero-fill without a division, divisors stored as
# reciprocals) against main cc71e44 (.devcmd/old): bench_summed_rows on
# am, mag and wikikg2 (cap 32), old and new interleaved twice; then the
# new build's instruction count and warp states on am under Nsight Compute.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
bench_only() { # TAG TREE: the templates and bench_summed_rows only
  cmake -S "$2" -B "build-$1" -G Ninja -DHECTOR_BUILD_COMPILER=OFF \
    -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=OFF -DHECTOR_BUILD_TESTS=OFF \
    -DHECTOR_BUILD_GENERATED=OFF "${hector_gpu_cmake_args[@]}" > $R/build-$1.log 2>&1 &&
    cmake --build "build-$1" -j 8 --target bench_summed_rows >> $R/build-$1.log 2>&1
  echo "build $1 rc=$? $(gpu_elapsed)"
}
bench_only old .devcmd/old &
bench_only new . &
(for ds in am mag wikikg2; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin
done) > $R/dump.log 2>&1 &
wait
ls -la /tmp/*.bin
for round in 1 2; do
  for ds in am mag wikikg2; do
    for tag in old new; do
      timeout 90 ./build-$tag/bin/bench_summed_rows /tmp/$ds.bin 64 32 0 2>&1 | grep -E "^cap" | sed -E "s/^/$tag $ds /; s/ +/ /g" | cut -c1-220 >> $R/summed.txt
    done
  done
  echo "round $round $(gpu_elapsed)"
done
cat $R/summed.txt
timeout 200 ncu --clock-control none --kernel-name regex:linearMmaKernel \
  --launch-skip 3 --launch-count 1 --section SpeedOfLight \
  --section WarpStateStats --section SchedulerStats --metrics smsp__inst_executed.sum,smsp__pcsamp_warps_issue_stalled_long_scoreboard,smsp__pcsamp_warps_issue_stalled_wait,smsp__pcsamp_warps_issue_stalled_short_scoreboard,smsp__pcsamp_warps_issue_stalled_barrier,smsp__pcsamp_warps_issue_stalled_selected \
  ./build-new/bin/bench_summed_rows /tmp/am.bin 64 32 0 > $R/ncu-new.txt 2>&1
echo "ncu rc=$? $(gpu_elapsed)"
grep -E "Duration|DRAM Through|Issued Warp|Eligible Warps|inst_executed|stalled|Warp Cycles Per Issued" $R/ncu-new.txt | head -20
echo "done $(gpu_elapsed)"

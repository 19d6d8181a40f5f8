#!/usr/bin/env bash
# Session 38 call b: the chunk cap (runtime kSumChunkEdges = 32) swept
# again with today's summed kernel (session 25 found 16 to 32 best with
# the older staging), relation order, TF32, two interleaved rounds; then
# call a's `diag` on mag (what the atomics and the orders cost now).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
[ -x build-sr/bin/bench_summed_rows ] || GPU_BUILD_JOBS=12 gpu_build_target sr . bench_summed_rows &
for ds in mag am wikikg2; do
  [ -f /tmp/$ds.bin ] || python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > $R/dump-$ds.log 2>&1 &
done
wait
echo "ready $(gpu_elapsed)"
for round in 1 2; do
  for ds in mag am wikikg2; do
    for cap in 32 48 64 96 128; do
      timeout 60 ./build-sr/bin/bench_summed_rows /tmp/$ds.bin 64 $cap 0 2>&1 | grep -E "^cap" | sed -E "s/^/$ds /; s/ +/ /g" | tee -a $R/caps.txt
    done
  done
  echo "round $round $(gpu_elapsed)"
done
timeout 90 ./build-sr/bin/bench_summed_rows /tmp/mag.bin 64 32 0 diag 2>&1 | tee $R/diag-mag.txt | tail -8
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 28 call e: the committed benches after their shared helpers
# moved to BenchGraph.h (pairsOf, gatheredDotCall): bench_summed_rows and
# bench_attention_sums (its defaults: cap 64, lanes from the mean chunk)
# on aifb, am and mag, to check they print what calls a and d printed.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start e
GPU_BUILD_JOBS=16 gpu_build new .
for ds in aifb am mag; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > /dev/null 2>&1
  timeout 90 ./build-new/bin/bench_summed_rows /tmp/$ds.bin 64 32 0 2>&1 | grep -E "^cap|^pairs" | sed -E "s/^/$ds /; s/ +/ /g" >> $R/summed.txt
  timeout 120 ./build-new/bin/bench_attention_sums /tmp/$ds.bin 2>&1 | sed -E "s/^/$ds /; s/ +/ /g" >> $R/attention.txt
  echo "== $ds $(gpu_elapsed)"; grep "^$ds " $R/summed.txt $R/attention.txt | cut -c1-260
done
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 28 call d: bench_attention_sums with the dst score a GEMM again
# and the softmax kernels in groups of 1 to 8 lanes a chunk (default: from
# the mean chunk size); am, mag and wikikg2, caps 32 and 64.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
GPU_BUILD_JOBS=16 gpu_build new .
for ds in aifb am mag wikikg2; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > /dev/null 2>&1
  for cfg in "64" "32" "64 1" "64 2" "64 4" "64 8"; do
    timeout 120 ./build-new/bin/bench_attention_sums /tmp/$ds.bin $cfg 2>&1 | sed -E "s/^/$ds cfg [$cfg] /" >> $R/attention.txt
  done
  echo "== $ds $(gpu_elapsed)"; grep "^$ds.*scores" $R/attention.txt | sed -E 's/ +/ /g'
done
echo "done $(gpu_elapsed)"

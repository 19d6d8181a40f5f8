#!/usr/bin/env bash
# Session 28 call c: bench_attention_sums after call b, with the dst score
# computed in the softmax's first kernel, a warp per chunk (a lane per
# entry) in both softmax kernels, and the output initialised a 16-byte
# word at a time; aifb, am, mag and wikikg2, caps 16, 32 and 64.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
GPU_BUILD_JOBS=16 gpu_build new .
for ds in aifb am mag wikikg2; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > /dev/null 2>&1
  for cap in 32 16 64; do
    timeout 120 ./build-new/bin/bench_attention_sums /tmp/$ds.bin $cap > $R/attention-$ds-$cap.txt 2>&1
    echo "== $ds cap $cap rc=$? $(gpu_elapsed)"; cat $R/attention-$ds-$cap.txt
  done
done
echo "done $(gpu_elapsed)"

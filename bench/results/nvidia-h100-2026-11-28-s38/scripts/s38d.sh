#!/usr/bin/env bash
# Session 38 call d: what the generated RGCN's divisor lookup costs. The
# summed call reads its divisor per chunk (bench_summed_rows' `summed`)
# or, as the generated code does, from a per-edge array at the chunk's
# first edge (`divisor by edge id`: scaleGather = sum_chunk_eid), a
# dependent load a row. Cap 64 (kSumChunkEdges since call c), TF32, two
# interleaved rounds on mag, am and wikikg2.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
GPU_BUILD_JOBS=14 gpu_build_target sr . bench_summed_rows &
for ds in mag am wikikg2; do
  python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > $R/dump-$ds.log 2>&1 &
done
wait
echo "ready $(gpu_elapsed)"
for round in 1 2; do
  for ds in mag am wikikg2; do
    timeout 60 ./build-sr/bin/bench_summed_rows /tmp/$ds.bin 64 64 0 2>&1 | grep -E "^cap" | sed -E "s/^/$ds /; s/ +/ /g" | tee -a $R/by-edge.txt
  done
  echo "round $round $(gpu_elapsed)"
done
echo "done $(gpu_elapsed)"

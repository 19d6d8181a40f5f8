#!/usr/bin/env bash
# Session 38 call a: does ordering the summed chunks by blocks of
# destinations (rowType slices; bench_summed_rows' `block`) still pay with
# today's summed kernel? Session 25 measured +8% on mag, +1% on am, -1% on
# wikikg2 with blocks of 131072 against a kernel twice as slow. Sweep the
# block from 131072 down to 1 (destination-major) at cap 32, TF32, two
# interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=12 gpu_build_target sr . bench_summed_rows &
(for ds in mag am wikikg2; do
  python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin
done) > $R/dump.log 2>&1 &
wait
echo "dumped $(ls /tmp/*.bin | wc -l) $(gpu_elapsed)"
for round in 1 2; do
  for b in 0 131072 16384 2048 256 64 16 1; do
    timeout 60 ./build-sr/bin/bench_summed_rows /tmp/mag.bin 64 32 $b 2>&1 | grep -E "^cap" | sed -E "s/^/mag /; s/ +/ /g" | tee -a $R/blocks.txt
  done
  for ds in am wikikg2; do
    for b in 0 131072 2048 64; do
      timeout 60 ./build-sr/bin/bench_summed_rows /tmp/$ds.bin 64 32 $b 2>&1 | grep -E "^cap" | sed -E "s/^/$ds /; s/ +/ /g" | tee -a $R/blocks.txt
    done
  done
  echo "round $round $(gpu_elapsed)"
done
echo "done $(gpu_elapsed)"

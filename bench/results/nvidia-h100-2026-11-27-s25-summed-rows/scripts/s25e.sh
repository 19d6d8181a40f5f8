#!/usr/bin/env bash
# Session 25 call e: the summed-rows staging at 128 registers (4 blocks a
# multiprocessor) with the next batch's entries loaded ahead, kAhead 4, 6
# and 8 entries a batch: bench_summed_rows on am, mag, wikikg2.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start e
for a in 4 6 8; do
  ( cmake -S . -B build-a$a -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON -DHECTOR_BUILD_TESTS=OFF "${hector_gpu_cmake_args[@]}" -DCMAKE_CUDA_FLAGS=-DHECTOR_SUM_AHEAD=$a > $R/build-a$a.log 2>&1 && cmake --build build-a$a --target bench_summed_rows -j 5 >> $R/build-a$a.log 2>&1; echo "build a$a rc=$? $(gpu_elapsed)" ) &
done
wait
for ds in am mag wikikg2; do
  PYTHONPATH=$PWD/runtime/python python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > /dev/null 2>&1
  for a in 4 6 8; do
    for cfg in "16 0" "16 131072" "64 131072"; do
      timeout 100 ./build-a$a/bin/bench_summed_rows /tmp/$ds.bin 64 $cfg 2>&1 | grep cap | sed "s/^/$ds a$a /"
    done
  done
  echo "== $ds $(gpu_elapsed)"
done | tee $R/ahead.txt
echo "done $(gpu_elapsed)"

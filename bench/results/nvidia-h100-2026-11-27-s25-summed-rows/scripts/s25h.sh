#!/usr/bin/env bash
# Session 25 call h: branch summed-prefetch (the next batch's gathered
# rows prefetched into L2, entries loaded two batches ahead; kAhead 4 and
# 6) against main's kernel (kAhead 6, no prefetch): bench_summed_rows on
# am, mag, wikikg2; the summed template tests on the prefetch build.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start h
build() { # TAG TREE FLAGS TARGETS
  ( cmake -S $2 -B build-$1 -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON -DHECTOR_BUILD_TESTS=$4 "${hector_gpu_cmake_args[@]}" -DCMAKE_CUDA_FLAGS="$3" > $R/build-$1.log 2>&1 && cmake --build build-$1 --target bench_summed_rows $([ $4 = ON ] && echo templates_tests) -j 5 >> $R/build-$1.log 2>&1; echo "build $1 rc=$? $(gpu_elapsed)" )
}
build p4 . -DHECTOR_SUM_AHEAD=4 ON &
build p6 . -DHECTOR_SUM_AHEAD=6 OFF &
build main .devcmd/old "" OFF &
wait
./build-p4/bin/templates_tests --gtest_filter='*ummed*' > $R/templates-p4.log 2>&1; echo "templates p4 rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates-p4.log | head -2 | tr '\n' ' ')"
for ds in am mag wikikg2; do
  PYTHONPATH=$PWD/runtime/python python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > /dev/null 2>&1
  for tag in main p4 p6; do
    for cfg in "16 0" "32 0" "32 131072"; do
      timeout 100 ./build-$tag/bin/bench_summed_rows /tmp/$ds.bin 64 $cfg 2>&1 | grep cap | sed "s/^/$ds $tag /"
    done
  done
  echo "== $ds $(gpu_elapsed)"
done | tee $R/prefetch.txt
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 33 call i: branch weighted-ring (weighted summed rows through the
# cp.async ring too: one X buffer, four blocks) with
# HECTOR_SUM_RING_WEIGHTED=1 (`wr1`) against =0 (`wr0`, main's weighted
# path): templates_tests' summed CUDA cases and memcheck on them (wr1);
# bench_summed_rows on am, mag and wikikg2 (its `weighted` column), wr0
# then wr1, two rounds if time allows.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start i
GPU_BUILD_JOBS=5 gpu_build_target wr0 . bench_summed_rows -DHECTOR_SUM_RING_WEIGHTED=0 &
GPU_BUILD_JOBS=5 gpu_build_target wr1 . bench_summed_rows &
(cmake -S . -B build-tests -G Ninja -DHECTOR_BUILD_COMPILER=OFF \
   -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=OFF -DHECTOR_BUILD_TESTS=ON \
   -DHECTOR_BUILD_GENERATED=OFF "${hector_gpu_cmake_args[@]}" > $R/build-tests.log 2>&1 &&
 cmake --build build-tests -j 6 --target templates_tests >> $R/build-tests.log 2>&1
 echo "build tests rc=$? $(gpu_elapsed)") &
(for ds in am mag wikikg2; do
  gpu_with wr1 python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin
done) > $R/dump.log 2>&1 &
wait
F='Table/SegmentGemm.Cuda/*umm*:SegmentGemmCuda.*'
timeout 60 ./build-tests/bin/templates_tests --gtest_filter="$F" > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-tests/bin/templates_tests --gtest_filter="$F" > $R/san-memcheck-templates.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-templates.log | tail -1) $(gpu_elapsed)"
for round in 1 2; do
  for ds in am mag wikikg2; do
    for tag in wr0 wr1; do
      [ $(($(date +%s) - GPU_T0)) -gt 300 ] && continue
      timeout 40 ./build-$tag/bin/bench_summed_rows /tmp/$ds.bin 64 32 0 2>&1 | grep -E "^cap" | sed -E "s/^/$tag $ds /; s/ +/ /g" | cut -c1-220 >> $R/summed.txt
    done
  done
  echo "round $round $(gpu_elapsed)"
done
cat $R/summed.txt
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# For the next session's first device call (not run in session 43): the
# summed GEMM's runs in groups of 8 lanes (experiments/sum-lanes8.diff,
# perf-notes section 103). Apply the diff to main (git apply), copy this
# script into the session's scripts/ and run it there. One tree, two
# builds: HECTOR_SUM_LANES=16 (`l16`, main's kernel) and the default 8
# (`new`). Checks: the summed and weighted GEMM table cases, also under
# memcheck; the CUDA pytest cases of the generated models at their
# declared hypers. Speed: bench_summed_rows (the summed call alone, cap
# 64, TF32) on mag, am and wikikg2 with either build, two rounds; then
# RGCN, RGAT and HGT inference on am, mag and wikikg2, two interleaved
# rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=6 gpu_build new . tests &
(
  hector_gpu_cmake_args+=("-DCMAKE_CUDA_FLAGS=-DHECTOR_SUM_LANES=16")
  GPU_BUILD_JOBS=4 gpu_build l16 .
) &
GPU_BUILD_JOBS=3 gpu_build_target sr8 . bench_summed_rows &
GPU_BUILD_JOBS=3 gpu_build_target sr16 . bench_summed_rows -DHECTOR_SUM_LANES=16 &
wait
for ds in mag am wikikg2; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin \
    > $R/dump-$ds.log 2>&1 &
done
F='*SegmentGemm.Cuda*/*ummed*'
gpu_gtests new gemm "$F" "" 60
gpu_gtests new san-memcheck-gemm "$F" memcheck 60
gpu_with new timeout 60 python3 -m pytest -q -x -k "cuda and declared_hypers" \
  tests/python/test_generated.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
wait
for round in 1 2; do
  for ds in mag am wikikg2; do
    for b in sr16 sr8; do
      timeout 60 ./build-$b/bin/bench_summed_rows /tmp/$ds.bin 64 64 0 2>&1 |
        grep -E "^cap" | sed -E "s/^/$ds $b /; s/ +/ /g" | tee -a $R/summed.txt
    done
  done
done
GPU_TP_DEADLINE=480 gpu_throughput_ab l16 new 2 --tf32 \
  --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 21 call d: the final tree (0580871) with the benchmark's
# ablation variants: CUDA pytest, memcheck, racecheck on rgat_pyg and
# hgt_pyg declared-hyper tests.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start d
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 150 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_with new timeout 100 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared" > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(tail -1 $R/san-memcheck.log) $(gpu_elapsed)"
for m in rgat_pyg hgt_pyg; do
  gpu_with new timeout 170 compute-sanitizer --tool racecheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared and $m" > $R/san-racecheck-$m.log 2>&1
  echo "racecheck $m rc=$? $(tail -1 $R/san-racecheck-$m.log) $(gpu_elapsed)"
done
echo "done $(gpu_elapsed)"

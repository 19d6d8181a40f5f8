#!/usr/bin/env bash
# Session 23 call a: branch deferred-normalization's head (new, with tests
# and the bench variants) against main (old): CUDA pytest, racecheck and
# memcheck on the attention models' declared-hyper tests.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start a
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=12 gpu_build new . tests &
hector_gpu_cmake_args=()
GPU_BUILD_JOBS=4 gpu_build old .devcmd/old &
wait
gpu_with new timeout 150 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
for k in "declared and rgat_pyg" "declared and hgt_pyg" "declared and (rgat or hgt) and not pyg"; do
  f=$R/san-racecheck-$(echo "$k" | tr -c 'a-z0-9' '_' | cut -c1-40).log
  gpu_with new timeout 100 compute-sanitizer --tool racecheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and $k" > $f 2>&1
  echo "racecheck [$k] rc=$? $(grep -E 'RACECHECK SUMMARY' $f | sort | uniq -c | tr '\n' ' ') $(tail -1 $f) $(gpu_elapsed)"
done
gpu_with new timeout 80 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared" > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(tail -1 $R/san-memcheck.log) $(gpu_elapsed)"
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 25 call b: summed rows staged over the whole block
# (stageSummedTile): template tests, memcheck and racecheck of the summed
# cases, then bench_summed_rows on am, mag, wikikg2 (caps, destination
# blocks).
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start b
GPU_BUILD_JOBS=16 gpu_build new . tests
./build-new/bin/templates_tests --gtest_filter='*ummed*:*Mma*:*mma*' > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED" $R/templates.log | head
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='*ummed*' > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(gpu_elapsed)"
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='*Cuda/summed*' > $R/san-racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-racecheck.log | tail -1) $(gpu_elapsed)"
for ds in am mag wikikg2; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > /dev/null 2>&1
  timeout 200 ./build-new/bin/bench_summed_rows /tmp/$ds.bin > $R/summed-$ds.txt 2>&1
  echo "== $ds rc=$? $(gpu_elapsed)"; cat $R/summed-$ds.txt
done
echo "done $(gpu_elapsed)"

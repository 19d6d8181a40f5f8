#!/usr/bin/env bash
# Session 25 call a: the GEMM template's summed rows (sumPtr): template
# tests (tensor cores on and off), memcheck of the summed cases, then
# bench_summed_rows (an RGCN forward as root GEMM + summed-rows GEMM) on
# am, mag and wikikg2 against the DRAM floor, and the harness's hector
# RGCN inference on the same three graphs for a same-machine baseline.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start a
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
GPU_BUILD_JOBS=16 gpu_build new . tests
./build-new/bin/templates_tests > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
HECTOR_GEMM_MMA=0 ./build-new/bin/templates_tests --gtest_filter='*ummed*' > $R/templates-nomma.log 2>&1; echo "templates nomma rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates-nomma.log | head -2 | tr '\n' ' ')"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='*ummed*' > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(gpu_elapsed)"
for ds in am mag wikikg2; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > /dev/null 2>&1
  timeout 150 ./build-new/bin/bench_summed_rows /tmp/$ds.bin > $R/summed-$ds.txt 2>&1
  echo "== $ds rc=$? $(gpu_elapsed)"; cat $R/summed-$ds.txt
done
gpu_with new timeout 200 python3 -m hector.bench --tf32 --systems hector --models rgcn --modes inference --datasets am,mag,wikikg2 --no-chart --out $R/harness > $R/harness.log 2>&1
echo "harness rc=$? $(gpu_elapsed)"; grep -E "ms  floor" $R/harness.log | head
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 25 call j: branch summed-rows-lowering (bias with accumulate in
# the template, the chunk arrays, summed-by-segment lowering of edge
# GEMMs; bench variants rgcn_pyg_u/r use it) against main: template
# tests, CUDA pytest, the variants against PyG on CUDA, memcheck of the
# template's new cases, and the harness's hector-u / hector-r / hector-cr
# RGCN inference on am, mag, wikikg2 for both trees.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start j
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=11 gpu_build new . tests &
GPU_BUILD_JOBS=5 gpu_build old .devcmd/old &
wait
./build-new/bin/templates_tests --gtest_filter='*ias*:*ummed*:*Check*' > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='*Cuda*ias*:*Cuda*ummed*' > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(gpu_elapsed)"
gpu_with new timeout 200 python3 -m pytest tests/python -q -x -k "cuda or built_variants" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
for tag in old new; do
  gpu_with $tag timeout 150 python3 -m hector.bench --tf32 --systems hector-u,hector-r,hector-cr --models rgcn --modes inference --datasets am,mag,wikikg2 --no-chart --out $R/harness-$tag > $R/harness-$tag.log 2>&1
  echo "harness $tag rc=$? $(gpu_elapsed)"; grep -E "ms  floor" $R/harness-$tag.log | sed -E 's/ +/ /g'
done
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 33 call g: issue 9's run from main 3e8c936 (this session's
# leaner summed staging, cp.async ring and quad stores): every Hector
# system and every baseline but pyg-hgt-compile, --tf32, all 8 datasets
# (merged later with session 22's pyg-hgt-compile records); then
# templates_tests' CUDA cases with the time left (call h runs the rest on
# the same build).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start g
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new . tests
gpu_with new timeout 400 python3 -m hector.bench --tf32 \
  --systems pyg-rgcn,pyg-fastrgcn,segmm-rgcn,pyg-rgat,pyg-rgat-compile,pyg-hgt,hector,hector-u,hector-c,hector-r,hector-cr \
  --models rgcn,rgat,hgt --case-timeout 20 --prepare-timeout 200 --no-chart \
  --out $R/harness > $R/harness.log 2>&1
echo "harness rc=$? $(grep -c '^\[' $R/harness.log) records $(gpu_elapsed)"
grep -E 'Geometric' $R/harness/table.md | head -8
left=$((590 - $(date +%s) + GPU_T0))
if [ $left -gt 20 ]; then
  timeout $left ./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates.log 2>&1
  echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
fi
echo "done $(gpu_elapsed)"

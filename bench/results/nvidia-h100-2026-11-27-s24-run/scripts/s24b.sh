#!/usr/bin/env bash
# Session 24 call b: allow_tf32 reaches the outer (weight-gradient) GEMMs.
# new = this tree (tests + bench variants, kept for call c's harness),
# old = ce472cf (.devcmd/old). CUDA pytest on new (the new tf32 tests),
# memcheck on the tf32 tests, then the --tf32 throughput A/B, training,
# 8 datasets, RGCN RGAT HGT, two rounds.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start b
saved=("${hector_gpu_cmake_args[@]}")
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=12 gpu_build new . tests &
hector_gpu_cmake_args=("${saved[@]}")
GPU_BUILD_JOBS=4 gpu_build old .devcmd/old &
wait
gpu_with new timeout 150 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_with new timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and tf32" > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(tail -1 $R/san-memcheck.log) $(gpu_elapsed)"
GPU_TP_TIMEOUT=150 gpu_throughput_ab old new 2 --tf32 --datasets aifb,mutag,bgs,biokg,am,fb15k,mag,wikikg2 --models rgcn,rgat,hgt --modes training > $R/ab.txt
tail -24 $R/ab.txt
echo "done $(gpu_elapsed)"

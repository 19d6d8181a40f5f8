#!/usr/bin/env bash
# Session 21 call j: the fixed-hyper 16-lane instantiation of RGAT's
# forward asks for 6 blocks an SM (launch bounds; other kernels' registers
# unchanged) against HEAD: CUDA pytest (rgat and the 16/32-lane tests),
# memcheck on rgat_pyg's declared-hyper tests, RGAT throughput A/B with
# TF32 on 8 datasets, two interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start j
GPU_BUILD_JOBS=8 gpu_build new . &
GPU_BUILD_JOBS=8 gpu_build old .devcmd/old &
wait
gpu_with new timeout 100 python3 -m pytest tests/python -q -x -k "cuda and (rgat or node_row)" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_with new timeout 80 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared and rgat_pyg" > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(tail -1 $R/san-memcheck.log) $(gpu_elapsed)"
GPU_TP_TIMEOUT=90 gpu_throughput_ab old new 2 --tf32 --datasets aifb,mutag,bgs,biokg,am,fb15k,mag,wikikg2 --models rgat --modes inference,training > $R/ab.txt
tail -16 $R/ab.txt
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 21 call b: one-lane linear terms a quad at a time (RGAT's
# alpha_0 dot) against 1a6e3ee: rgat CUDA pytest, memcheck, RGAT
# throughput A/B, ncu of the forward traversal on am.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start b
GPU_BUILD_JOBS=10 gpu_build new . &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
wait
gpu_with new timeout 120 python3 -m pytest tests/python -q -x -k "cuda and rgat" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_with new timeout 90 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared and rgat" > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(tail -1 $R/san-memcheck.log) $(gpu_elapsed)"
GPU_TP_TIMEOUT=90 gpu_throughput_ab old new 1 --datasets aifb,mutag,bgs,biokg,am,fb15k,mag,wikikg2 --models rgat --modes inference,training > $R/ab1.txt
GPU_TP_TIMEOUT=60 gpu_throughput_ab old new 2 --datasets am,mag,wikikg2 --models rgat --modes inference,training
M="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats"
gpu_with new timeout 60 ncu --clock-control none $M -k regex:"forward_trav" python3 -m hector.bench.profile --datasets am --models rgat --modes inference --steps 1 --warmup 0 --rows 4 > $R/ncu-am.txt 2>&1
echo "ncu rc=$? $(gpu_elapsed)"
echo "done $(gpu_elapsed)"

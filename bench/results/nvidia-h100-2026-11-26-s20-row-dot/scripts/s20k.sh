#!/usr/bin/env bash
# Session 20 call k: node-row groups of 16 lanes only for rows with three
# or more edge loops (branch node-lanes, 3a-) against main (5797f9c, its
# own Python package): CUDA pytest, throughput A/B of the three models.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start k
GPU_BUILD_JOBS=10 gpu_build new . &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old2 &
wait
gpu_with new timeout 120 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
GPU_TP_TIMEOUT=90 gpu_throughput_ab old new 1 --datasets aifb,mutag,bgs,biokg,am,fb15k,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training > $R/ab1.txt
GPU_TP_TIMEOUT=60 gpu_throughput_ab old new 1 --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training
echo "done $(gpu_elapsed)"

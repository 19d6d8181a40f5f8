#!/usr/bin/env bash
# Session 24 call d: kernel profiles at main (78f0739): the small graphs'
# RGAT training step (where the target's margin is), and am's and
# wikikg2's RGCN and RGAT forward (the floor targets).
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start d
GPU_BUILD_JOBS=16 gpu_build main .
gpu_with main timeout 120 python3 -m hector.bench.profile --tf32 --datasets aifb,mutag,bgs,fb15k --models rgat --systems hector --modes training --rows 25 --out $R/prof > $R/prof-small.log 2>&1
echo "profile small rc=$? $(gpu_elapsed)"; grep "^step\|^==" $R/prof-small.log
gpu_with main timeout 120 python3 -m hector.bench.profile --tf32 --datasets am,wikikg2 --models rgcn,rgat --systems hector --modes inference --rows 15 --out $R/prof > $R/prof-large.log 2>&1
echo "profile large rc=$? $(gpu_elapsed)"; grep "^step\|^==" $R/prof-large.log
echo "done $(gpu_elapsed)"

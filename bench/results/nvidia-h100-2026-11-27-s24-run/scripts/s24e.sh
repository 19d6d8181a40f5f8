#!/usr/bin/env bash
# Session 24 call e: the HGTConv drop-in's host time (cProfile) against
# hector-cr's, aifb and fb15k inference, at main.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start e
GPU_BUILD_JOBS=16 gpu_build main .
gpu_with main timeout 120 python3 .devcmd/dropin_prof.py aifb,fb15k > $R/dropin.log 2>&1
echo "dropin rc=$? $(gpu_elapsed)"; grep "host us" $R/dropin.log
echo "done $(gpu_elapsed)"

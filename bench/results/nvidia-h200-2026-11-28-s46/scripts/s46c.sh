#!/usr/bin/env bash
# Session 46, call c: main 31f1bdf; s46c_host.py (a synchronised `hector`
# step's host time split at the generated op's call; waiting by
# synchronize, by spinning on query, and with the garbage collector off),
# in a fresh process (mag, then am), in a process that ran the harness on
# am's RGCN inference first (mag), and in a fresh process again.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
GPU_BUILD_JOBS=16 gpu_build main .
S=bench/results/nvidia-h200-2026-11-28-s46/scripts/s46c_host.py
for phase in fresh after-am fresh; do
  gpu_with main timeout 150 python3 $S $R $phase 2>>$R/host.err |
    grep -E '^\{' | tee -a $R/host.jsonl
  echo "$phase rc=$? $(gpu_elapsed)"
done
tail -3 $R/host.err

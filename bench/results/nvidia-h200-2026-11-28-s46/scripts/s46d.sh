#!/usr/bin/env bash
# Session 46, call d: main 31f1bdf; s46d_nn.py (hector.nn's drop-in
# against LayerLibrary.run on the same library: synchronised medians and
# a profiler trace of 5 steps each, HGT aifb, mutag and am, RGCN and RGAT
# aifb).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
GPU_BUILD_JOBS=16 gpu_build main .
gpu_with main timeout 240 python3 \
  bench/results/nvidia-h200-2026-11-28-s46/scripts/s46d_nn.py $R \
  2>$R/nn.err | grep -E '^\{' | tee $R/nn.jsonl
echo "nn rc=$? $(gpu_elapsed)"
tail -3 $R/nn.err
gzip -f $R/trace-*.json

#!/usr/bin/env bash
# Session 45, call i: main d56ed6c; s45i_trace.py (the harness on am's
# `hector` case, then mag's synchronised step traced in the same process).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start i
GPU_BUILD_JOBS=16 gpu_build main .
gpu_with main timeout 120 python3 \
  bench/results/nvidia-h200-2026-11-28-s45/scripts/s45i_trace.py $R \
  2>$R/trace.err | grep -vE "^\[|^--|^hector.bench|^host" | tee $R/trace.jsonl
echo "trace rc=$? $(gpu_elapsed)"
gzip -f $R/trace-mag.json

#!/usr/bin/env bash
# Session 36 call e: call d's table had the `hector` drop-in's RGAT
# training step on aifb at 0.871 ms against hector-cr's 0.594 (the same
# kernels). graph_hits.py: which systems replay launch graphs in steps
# timed as the harness times them, and how many launches they make.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start e
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 120 python3 \
  bench/results/nvidia-h100-2026-11-28-s36/scripts/graph_hits.py \
  aifb,mutag hector,hector-cr 2>&1 | grep -v Warning
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 45, call h: main d56ed6c; s45h_after_am.py (is call g's slower
# mag after am a matter of where mag's arrays landed?).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start h
GPU_BUILD_JOBS=16 gpu_build main .
gpu_with main timeout 120 python3 \
  bench/results/nvidia-h200-2026-11-28-s45/scripts/s45h_after_am.py \
  2>$R/after-am.err | tee $R/after-am.jsonl
echo "after-am rc=$? $(gpu_elapsed)"

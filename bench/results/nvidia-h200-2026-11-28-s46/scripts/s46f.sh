#!/usr/bin/env bash
# Session 46, call f: branch s46-nn-host; s46f_toggle.py (section 110's
# host-path changes switched off and on in one process, `hector`
# inference, synchronised steps).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start f
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 300 python3 \
  bench/results/nvidia-h200-2026-11-28-s46/scripts/s46f_toggle.py \
  2>$R/toggle.err | grep -E '^\{' | tee $R/toggle.jsonl
echo "toggle rc=$? $(gpu_elapsed)"
tail -3 $R/toggle.err

#!/usr/bin/env bash
# Session 46, call h: main 24b3a66, no build (torch only): s46h_gather.py,
# summed gathers of fp32 against fp16 rows on am, mag and wikikg2.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start h
PYTHONPATH="$PWD/runtime/python" timeout 150 python3 \
  bench/results/nvidia-h200-2026-11-28-s46/scripts/s46h_gather.py \
  2>$R/gather.err | tee $R/gather.jsonl
echo "gather rc=$? $(gpu_elapsed)"
tail -3 $R/gather.err

#!/usr/bin/env bash
# Session 46, call g: main 2930a8d (section 110 landed, with
# _consecutive_view's cheapest test first). Checks: the CUDA cases of
# test_nn.py, test_layers.py and test_replay.py. Speed: s46f_toggle.py
# again on the landed code.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start g
GPU_BUILD_JOBS=16 gpu_build main .
gpu_with main timeout 120 python3 -m pytest -q -k cuda \
  tests/python/test_nn.py tests/python/test_layers.py \
  tests/python/test_replay.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_with main timeout 200 python3 \
  bench/results/nvidia-h200-2026-11-28-s46/scripts/s46f_toggle.py \
  2>$R/toggle.err | grep -E '^\{' | tee $R/toggle.jsonl
echo "toggle rc=$? $(gpu_elapsed)"
tail -3 $R/toggle.err

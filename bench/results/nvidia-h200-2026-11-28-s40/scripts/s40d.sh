#!/usr/bin/env bash
# Session 40 call d: call b's TF32 failures at the declared hypers. Each
# layer's worst TF32 error with the weights at 0.5 and at Glorot's scale
# (tf32_errors.py); the TF32 pytest with the declared case on Glorot's
# scale, and the HGT layers' CUDA pytest; HGT inference on am and mag
# with the kqv projection's windows apart (HECTOR_GEMM_DENSE_WINDOWS=1)
# against together, one round, on the H200.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 90 python3 bench/results/nvidia-h200-2026-11-28-s40/scripts/tf32_errors.py \
  > $R/tf32-errors.txt 2>&1
echo "tf32 errors rc=$? $(gpu_elapsed)"; cat $R/tf32-errors.txt | tail -14
gpu_with new timeout 120 python3 -m pytest -q -k "cuda and (tf32 or hgt)" \
  tests/python/test_generated.py tests/python/test_nn.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|^E  " $R/pytest.log | head -10
for w in 1 0; do
  HECTOR_GEMM_DENSE_WINDOWS=$w gpu_with new timeout 60 python3 -m hector.bench.throughput \
    --tf32 --datasets am,mag --models hgt --modes inference --tag windows$w \
    >> $R/tp.jsonl 2>> $R/tp.err
  echo "windows=$w rc=$? $(gpu_elapsed)"
done
cat $R/tp.jsonl
echo "done $(gpu_elapsed)"

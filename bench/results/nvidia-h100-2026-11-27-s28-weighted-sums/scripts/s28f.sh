#!/usr/bin/env bash
# Session 28 call f: where deterministic RGCN training spends its 6.2 s a
# step on am (session 27 call e): torch.profiler's kernel table of the
# `hector` system's training step with torch.use_deterministic_algorithms,
# and of its inference step; --tf32, 2 steps after 1.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start f
GPU_BUILD_JOBS=16 gpu_build new .
for mode in training inference; do
  gpu_with new timeout 200 python3 $(dirname "$0")/det_profile.py --tf32 \
    --datasets am --models rgcn --systems hector --modes $mode --steps 2 \
    --warmup 1 --rows 14 --out $R/prof > $R/prof-$mode.log 2>&1
  echo "== $mode rc=$? $(gpu_elapsed)"; cut -c1-40,95-200 $R/prof-$mode.log | tail -24
done
echo "done $(gpu_elapsed)"

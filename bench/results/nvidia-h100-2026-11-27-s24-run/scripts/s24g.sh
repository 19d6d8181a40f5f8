#!/usr/bin/env bash
# Session 24 call g: accumulate-partials where it applies, training steps
# whose input features require grad: a2e9bb7 (old) against ce472cf (mid,
# the merge, before the outer-GEMM TF32 change), am and wikikg2, RGCN and
# RGAT, --tf32, two interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start g
GPU_BUILD_JOBS=8 gpu_build old .devcmd/old &
GPU_BUILD_JOBS=8 gpu_build mid .devcmd/mid &
wait
for round in 1 2; do
  for tag in old mid; do
    gpu_with $tag timeout 100 python3 .devcmd/inputgrad_tp.py am,wikikg2 rgcn,rgat $tag >> $R/tp.jsonl 2>> $R/tp.err
    echo "$tag round $round rc=$? $(gpu_elapsed)"
  done
done
cat $R/tp.jsonl; tail -3 $R/tp.err
echo "done $(gpu_elapsed)"

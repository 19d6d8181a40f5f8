#!/usr/bin/env bash
# Session 33 call a: issue 9's run from main cc71e44 (sections 71 and 73
# in): every Hector system and every baseline but pyg-hgt-compile,
# --tf32, all 8 datasets (merged later with session 22's pyg-hgt-compile
# records); then host_probe.py on am's RGCN and HGT inference with the
# time left.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
S=bench/results/nvidia-h100-2026-11-28-s33/scripts
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 400 python3 -m hector.bench --tf32 \
  --systems pyg-rgcn,pyg-fastrgcn,segmm-rgcn,pyg-rgat,pyg-rgat-compile,pyg-hgt,hector,hector-u,hector-c,hector-r,hector-cr \
  --models rgcn,rgat,hgt --case-timeout 20 --prepare-timeout 200 --no-chart \
  --out $R/harness > $R/harness.log 2>&1
echo "harness rc=$? $(grep -c '^\[' $R/harness.log) records $(gpu_elapsed)"
grep -E 'Geometric' $R/harness/table.md | head -8
left=$((585 - $(date +%s) + GPU_T0))
if [ $left -gt 30 ]; then
  gpu_with new timeout $left python3 $S/host_probe.py --tf32 --datasets am \
    --models rgcn,hgt --modes inference --profile > $R/host-probe.log 2>&1
  echo "probe rc=$? $(gpu_elapsed)"
  grep -E "harness" $R/host-probe.log
fi
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 24 call i: hector-u against hector-cr, HGT training on fb15k and
# aifb, the tables sorted by host time (call h's were by device time).
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start i
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build main .
gpu_with main timeout 150 python3 -m hector.bench.profile --tf32 --sort host --datasets fb15k,aifb --models hgt --systems hector-u,hector-cr --modes training --rows 30 > $R/prof-hgt-host.log 2>&1
echo "profile rc=$? $(gpu_elapsed)"; grep "^step\|^==" $R/prof-hgt-host.log
for s in hector-u hector-cr; do
  gpu_with main timeout 60 python3 -m hector.bench.throughput --tf32 --systems $s --models hgt --datasets aifb,fb15k --modes training --tag $s
done
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 24 call h: why hector-u trains HGT faster than hector-cr on aifb
# and fb15k (section 52's run): kernel profiles of both, at ed92965.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start h
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build main .
gpu_with main timeout 150 python3 -m hector.bench.profile --tf32 --datasets aifb,fb15k --models hgt --systems hector-u,hector-cr --modes training --rows 30 > $R/prof-hgt.log 2>&1
echo "profile rc=$? $(gpu_elapsed)"; grep "^step\|^==" $R/prof-hgt.log
echo "done $(gpu_elapsed)"

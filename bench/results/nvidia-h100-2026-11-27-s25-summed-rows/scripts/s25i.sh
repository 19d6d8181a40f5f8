#!/usr/bin/env bash
# Session 25 call i: main (summed rows landed: the tensor-core kernel's
# tile loop now goes through TileSequence for every call) against the
# session's base 54e241c: --tf32 throughput of every model on am and mag,
# inference and training, two rounds; bench_segment_gemm at main (its
# timing moved to BenchTiming.h).
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start i
GPU_BUILD_JOBS=10 gpu_build new . &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
wait
timeout 60 ./build-new/bin/bench_segment_gemm > $R/bench-segment-gemm.txt 2>&1; echo "bench_segment_gemm rc=$?"; head -4 $R/bench-segment-gemm.txt
GPU_TP_TIMEOUT=150 gpu_throughput_ab old new 2 --tf32 --datasets am,mag --models rgcn,rgat,hgt --modes inference,training > $R/ab.txt
tail -16 $R/ab.txt
echo "done $(gpu_elapsed)"

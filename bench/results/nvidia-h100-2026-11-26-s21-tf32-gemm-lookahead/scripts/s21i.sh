#!/usr/bin/env bash
# Session 21 call i (experiment, not committed): the *_pyg traversal
# kernels' launch bounds ask for 6 blocks of 256 threads an SM (at most 40
# registers; ptxas spills 24-56 bytes in RGAT's forward) against HEAD;
# throughput A/B with TF32 on the large graphs.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start i
GPU_BUILD_JOBS=8 gpu_build base . &
GPU_BUILD_JOBS=8 gpu_build exp .devcmd/exp &
wait
GPU_TP_TIMEOUT=90 gpu_throughput_ab base exp 2 --tf32 --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training > $R/ab.txt
cat $R/ab.txt | tail -18
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 26 call c: main (RGCN's forward as two GEMMs; RGAT's self-loop
# GEMM takes the bias) against e24c0f6 on one machine: the --tf32
# throughput A/B, 8 datasets, RGCN and RGAT, inference and training, two
# interleaved rounds (the systems' best variant: hector-cr's kernels).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
GPU_BUILD_JOBS=11 gpu_build new . &
GPU_BUILD_JOBS=5 gpu_build old .devcmd/old &
wait
GPU_TP_TIMEOUT=150 gpu_throughput_ab old new 2 --tf32 --datasets aifb,mutag,bgs,biokg,am,fb15k,mag,wikikg2 --models rgcn,rgat --modes inference,training > $R/ab.txt
tail -40 $R/ab.txt
echo "done $(gpu_elapsed)"

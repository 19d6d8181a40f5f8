#!/usr/bin/env bash
# Session 23 call b: build main (old) and A/B it against the branch head
# (new, built in call a) with --tf32 on the 8 datasets, RGAT and HGT.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start b
GPU_BUILD_JOBS=16 gpu_build old .devcmd/old
GPU_TP_TIMEOUT=150 gpu_throughput_ab old new 2 --tf32 --datasets aifb,mutag,bgs,biokg,am,fb15k,mag,wikikg2 --models rgat,hgt --modes inference,training > $R/ab.txt
cat $R/ab.txt | tail -40
echo "done $(gpu_elapsed)"

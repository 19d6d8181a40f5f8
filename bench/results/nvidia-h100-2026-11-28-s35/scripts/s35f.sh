#!/usr/bin/env bash
# Session 35 call f: did this session's changes touch RGAT's training step
# on the small graphs, where call d's RGAT training speedup fell to 13.80
# (session 33: 17.10)? main 462e68a (`new`) against bedd23a (`old`,
# .devcmd/old): throughput of RGAT and RGCN training on aifb, mutag, bgs
# and fb15k, two interleaved rounds, on one machine; the host's smallest
# training step recorded by the harness on the same machine for scale.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start f
GPU_BUILD_JOBS=10 gpu_build new . &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
wait
GPU_TP_DEADLINE=480 gpu_throughput_ab old new 2 --tf32 \
  --datasets aifb,mutag,bgs,fb15k --models rgat,rgcn --modes training
gpu_with new timeout 60 python3 -c "
from hector.bench.timing import training_step_floor
print('smallest training step %.3f ms' % training_step_floor('cuda'))"
echo "done $(gpu_elapsed)"

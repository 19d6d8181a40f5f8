#!/usr/bin/env bash
# Session 36 call a: where RGAT's (and RGCN's) training step goes on the
# host on the small graphs, where RGAT training's speedup (14.50 / 13.80
# in session 35's runs, target 15) rests on host-bound steps. main's tree:
# hector.bench.host_split's phases for hector and hector-cr,
# eager and with HECTOR_CUDA_GRAPHS=1; a host-sorted profile
# and a Chrome trace of aifb's and mutag's RGAT training step.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 150 python3 -m hector.bench.host_split --tf32 \
  --datasets aifb,mutag,bgs,fb15k --models rgat,rgcn \
  --systems hector,hector-cr --modes training \
  --steps 200 --warmup 20 2>&1 | grep -v Warning | tee "$R/split.txt"
HECTOR_CUDA_GRAPHS=1 gpu_with new timeout 60 python3 -m \
  hector.bench.host_split --tf32 --datasets aifb,mutag --models rgat \
  --systems hector --modes training --steps 200 --warmup 20 2>&1 |
  grep -v Warning | tee "$R/split-graphs.txt"
gpu_with new timeout 90 python3 -m hector.bench.profile --tf32 \
  --datasets aifb,mutag --models rgat --modes training --systems hector \
  --steps 5 --warmup 5 --rows 40 --sort host --trace --out "$R/profile" \
  > "$R/profile.log" 2>&1
echo "profile rc=$? $(gpu_elapsed)"
grep -E "GPU busy" "$R/profile.log"
echo "done $(gpu_elapsed)"

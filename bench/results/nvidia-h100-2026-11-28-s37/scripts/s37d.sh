#!/usr/bin/env bash
# Session 37 call d: where the host's share of RGCN's mag and am forward
# goes (main 78d5459, call b's build when the machine kept it):
# scripts/host_gap.py times hector-r's and hector's inference steps as the
# harness does under torch.profiler and splits each step: Python before
# the op, the op to its first launch, the launch to its kernel, the
# kernels.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
if [ -f build-new/lib/libhector_rgcn_pyg_r.so ]; then
  echo "call b's build-new kept"
else
  GPU_BUILD_JOBS=16 gpu_build new .
fi
gpu_with new timeout 200 python3 \
  bench/results/nvidia-h100-2026-11-28-s37/scripts/host_gap.py --tf32 \
  --datasets mag,am --models rgcn --systems hector-r,hector \
  --modes inference --steps 20 --warmup 5 --out $R/gap 2>&1 \
  | grep -v Warning | tee $R/host-gap.txt
echo "host_gap rc=$? $(gpu_elapsed)"
gzip $R/gap/*.trace.json
echo "done $(gpu_elapsed)"

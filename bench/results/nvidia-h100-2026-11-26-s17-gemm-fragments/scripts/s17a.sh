#!/usr/bin/env bash
# Session 17 call a: where am's forward time goes at HEAD (2062dd6):
# per-kernel device time and Nsight Compute sections of every kernel of one
# am inference step, three models.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/a.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 120 python3 -m hector.bench.profile --datasets am,mag --models rgcn,rgat,hgt --modes inference --out $R/prof > $R/prof.log 2>&1
echo "profile rc=$? $(( $(date +%s) - t0 )) s"
S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats --section SchedulerStats"
for m in rgcn rgat hgt; do
  timeout 100 ncu --clock-control none -k regex:"trav|Mma|Kernel|fill" $S python3 -m hector.bench.profile --datasets am --models $m --modes inference --steps 1 --warmup 0 --rows 4 > $R/ncu-am-$m.txt 2>&1
  echo "ncu $m rc=$? $(( $(date +%s) - t0 )) s"
done
echo "done $(( $(date +%s) - t0 )) s"

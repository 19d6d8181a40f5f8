#!/usr/bin/env bash
# Session 16 call a: Nsight Compute on the forward node-row kernels of am
# (RGCN, RGAT, HGT) at HEAD, to see what bounds them.
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
NCU="ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats --section MemoryWorkloadAnalysis --section SourceCounters -k regex:forward_trav"
for m in rgcn rgat hgt; do
  c=2; [ $m = hgt ] && c=5
  timeout 150 $NCU -c $c python3 -m hector.bench.profile --datasets am --models $m --modes inference --steps 1 --warmup 0 --rows 8 > $R/ncu-am-$m.txt 2>&1
  echo "ncu $m rc=$? $(( $(date +%s) - t0 )) s"
  grep -E "forward_trav|Duration|DRAM Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Eligible Warps|Issued Warp" $R/ncu-am-$m.txt | cut -c1-150
done
timeout 100 python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference --tag base > $R/tp-base.jsonl 2>$R/tp.err
echo "tp rc=$? $(( $(date +%s) - t0 )) s"
cat $R/tp-base.jsonl | cut -c1-200

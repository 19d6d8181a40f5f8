#!/usr/bin/env bash
# Session 41 call b: where the forward steps of the open floor cells spend
# their time after section 94: per-kernel tables (hector.bench.profile,
# --tf32, hector-cr) of RGCN, RGAT and HGT inference on am, mag and
# wikikg2, then Nsight Compute's speed-of-light and memory sections on
# RGAT's wikikg2 inference step (hector-cr).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 200 python3 -m hector.bench.profile --tf32 \
  --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --systems hector-cr \
  --modes inference --steps 5 --warmup 2 --rows 14 --out $R/profile \
  > $R/profile.log 2>&1
echo "profile rc=$? $(gpu_elapsed)"
for f in $R/profile/*.txt; do echo "== $(basename $f)"; sed -n 5,16p $f | grep -v "^ *aten\|^ *cuda\|Activity\|^---" | cut -c30-90,161-216; tail -1 $f; done
N=ncu; command -v ncu >/dev/null || N=/usr/local/cuda/bin/ncu
gpu_with new timeout 150 $N --clock-control none \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
  --section LaunchStats -c 12 \
  python3 -m hector.bench.profile --tf32 --datasets wikikg2 --models rgat \
  --systems hector-cr --modes inference --steps 1 --warmup 0 --rows 4 \
  --out $R/ncu-profile > $R/ncu-wikikg2-rgat.txt 2>&1
echo "ncu rc=$? $(gpu_elapsed)"
grep -E "^  [a-z_:<> ]*(void|trav|Kernel)|^  void|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|L2 Hit|L1/TEX Hit" $R/ncu-wikikg2-rgat.txt | cut -c1-150 | head -90
echo "done $(gpu_elapsed)"

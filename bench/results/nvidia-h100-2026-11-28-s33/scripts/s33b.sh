#!/usr/bin/env bash
# Session 33 call b: where the forward's time goes on the three large
# graphs. (1) hector.bench.profile of RGCN, RGAT and HGT inference
# (hector-cr) on am, mag and wikikg2: the kernels by device time.
# (2) bench_summed_rows' diagnose on am, mag and wikikg2 (cap 32, rows in
# relation order, as the runtime chunks them): the summed GEMM with plain
# stores, with its sources in order, with its outputs in order.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new .
for ds in am mag wikikg2; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > /dev/null 2>&1
  timeout 90 ./build-new/bin/bench_summed_rows /tmp/$ds.bin 64 32 0 diag 2>&1 | grep -E "^cap|^diag|^graph" | sed -E "s/^/$ds /" >> $R/summed.txt
  echo "summed $ds rc=$? $(gpu_elapsed)"
done
cat $R/summed.txt
gpu_with new timeout 300 python3 -m hector.bench.profile --tf32 \
  --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference \
  --systems hector-cr --steps 3 --warmup 2 --rows 14 --out $R/profile > $R/profile.log 2>&1
echo "profile rc=$? $(gpu_elapsed)"
grep -E "^(=|#|-)|Self CUDA time total|busy|forward_|linear|Kernel|kernel" $R/profile.log | cut -c1-200 | head -150
echo "done $(gpu_elapsed)"

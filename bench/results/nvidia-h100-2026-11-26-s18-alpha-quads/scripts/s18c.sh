#!/usr/bin/env bash
# Session 18 call c: is RGCN's forward traversal on the large graphs bound
# by the latency of its per-edge loads? Two hand-edited copies of
# generated/rgcn_pyg/kernels.cu (forward_trav_2's edge loop; experiments,
# not committed): exp1 `#pragma unroll 4` on the worker edge loop; exp2
# per-lane register accumulators, float4 __ldg loads, unroll 4. A/B against
# the working tree (gpu) on am, mag, wikikg2; CUDA pytest of rgcn_pyg on
# exp2; ncu DRAM throughput of exp2's forward traversal on mag.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/c.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
build() { # TAG SRC
  cmake -S "$2" -B "build-$1" -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON \
    -DHECTOR_BUILD_TESTS=OFF "${hector_gpu_cmake_args[@]}" > $R/configure-$1.log 2>&1
  cmake --build "build-$1" -j 5 --target hector_C hector_rgcn_pyg > $R/build-$1.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build-$1.log; }
}
build gpu . & build exp1 .devcmd/exp1 & build exp2 .devcmd/exp2 & wait
echo "built $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
HECTOR_BUILD_DIR=$PWD/build-exp2 timeout 100 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and rgcn_pyg" > $R/pytest-exp2.log 2>&1
echo "pytest exp2 rc=$? $(tail -1 $R/pytest-exp2.log) $(( $(date +%s) - t0 )) s"
for b in gpu exp1 exp2; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout $([ $b = gpu ] && echo 150 || echo 70) python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgcn --modes inference,training --tag $b >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $b rc=$? $(( $(date +%s) - t0 )) s"
done
python3 -m hector.bench.compare $R/tp.jsonl --baseline gpu
for b in gpu exp2; do
HECTOR_BUILD_DIR=$PWD/build-$b timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed -k regex:forward_trav python3 -m hector.bench.profile --datasets mag,am --models rgcn --modes inference --steps 1 --warmup 0 --rows 4 > $R/ncu-$b.log 2>&1; echo "ncu $b rc=$?"
grep -E "forward_trav|gpu__time|dram__thr" $R/ncu-$b.log | sed 's/(GraphArrays.*//' 
done
echo "done $(( $(date +%s) - t0 )) s"

#!/usr/bin/env bash
# Session 18 call d: (after c) is RGCN's forward traversal on the large graphs bound
# by the latency of its per-edge loads? Two hand-edited copies of
# generated/rgcn_pyg/kernels.cu (forward_trav_2's edge loop, warp and heavy
# launches; experiments, not committed): exp2b register accumulators,
# float4 __ldg loads, unroll 4; exp3 unroll 4 and __ldg, shared-memory
# accumulators; exp4 register accumulators, scalar __ldg loads, unroll 4.
# A/B against the working tree (gpu) on am, mag, wikikg2; CUDA pytest of
# rgcn_pyg on each; ncu of the forward traversal on mag.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/d.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
build() { # TAG SRC
  cmake -S "$2" -B "build-$1" -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON \
    -DHECTOR_BUILD_TESTS=OFF "${hector_gpu_cmake_args[@]}" > $R/configure-$1.log 2>&1
  cmake --build "build-$1" -j 4 --target hector_C hector_rgcn_pyg > $R/build-$1.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build-$1.log; }
}
build gpu . & build exp2b .devcmd/exp2b & build exp3 .devcmd/exp3 & build exp4 .devcmd/exp4 & wait
echo "built $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
for b in exp2b exp3 exp4; do
HECTOR_BUILD_DIR=$PWD/build-$b timeout 100 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and rgcn_pyg" > $R/pytest-$b.log 2>&1
echo "pytest $b rc=$? $(tail -1 $R/pytest-$b.log) $(( $(date +%s) - t0 )) s"
done
for b in gpu exp2b exp3 exp4; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout $([ $b = gpu ] && echo 150 || echo 70) python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgcn --modes inference,training --tag $b >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $b rc=$? $(( $(date +%s) - t0 )) s"
done
python3 -m hector.bench.compare $R/tp.jsonl --baseline gpu
for b in exp2b exp3 exp4; do
HECTOR_BUILD_DIR=$PWD/build-$b timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed -k regex:forward_trav python3 -m hector.bench.profile --datasets mag --models rgcn --modes inference --steps 1 --warmup 0 --rows 4 > $R/ncu-$b.log 2>&1; echo "ncu $b rc=$?"
grep -E "forward_trav|gpu__time|dram__thr" $R/ncu-$b.log | sed 's/(GraphArrays.*//' 
done
echo "done $(( $(date +%s) - t0 )) s"

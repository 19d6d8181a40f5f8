#!/usr/bin/env bash
# Session 18 call b: RGAT's alpha_0 in the traversal. Builds: old (7aec56a,
# alpha_0 as a GEMM), varA (e3973bd: in the traversal, one lane per edge),
# gpu (the working tree: the worker's lanes share its 64 terms). CUDA
# pytest and memcheck on rgat; throughput A/B on am, mag, wikikg2; kernel
# times on am; ncu L2 hit rate of RGCN's forward traversal on mag.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/b.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
VARIANT_JOBS=8 bash bench/build-variant.sh old "" .devcmd/old > $R/build-old.log 2>&1 &
VARIANT_JOBS=8 bash bench/build-variant.sh varA "" .devcmd/varA > $R/build-varA.log 2>&1 &
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 120 python3 -m pytest tests/python/test_generated.py tests/python/test_nn.py -q -x -k "cuda and rgat" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
wait; echo "variants built $(( $(date +%s) - t0 )) s"; tail -1 $R/build-old.log $R/build-varA.log
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and rgat_pyg and (plain or declared)" > $R/san-memcheck-py.log 2>&1
echo "memcheck rc=$? $(tail -1 $R/san-memcheck-py.log) $(( $(date +%s) - t0 )) s"
for b in old varA gpu; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout $([ $b = old ] && echo 150 || echo 70) python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgat --modes inference,training --tag $b >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $b rc=$? $(( $(date +%s) - t0 )) s"
done
python3 -m hector.bench.compare $R/tp.jsonl --baseline old
for b in old gpu; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout 60 python3 -m hector.bench.profile --datasets am,mag --models rgat --modes inference --out $R/prof-$b > $R/prof-$b.log 2>&1; echo "prof $b rc=$?"
done
timeout 90 ncu --clock-control none --metrics gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed -k regex:forward_trav python3 -m hector.bench.profile --datasets mag --models rgcn --modes inference --steps 1 --warmup 0 --rows 4 > $R/ncu-mag-rgcn.log 2>&1; echo "ncu rc=$?"
echo "done $(( $(date +%s) - t0 )) s"

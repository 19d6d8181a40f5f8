#!/usr/bin/env bash
# Session 19 call c: layers on the destination-ordered edge numbering
# (Graph.kernel_arrays("dst")). Build, CUDA pytest, memcheck, throughput A/B
# of HECTOR_EDGE_ORDER=given against the default on the 8 datasets (both
# modes), and kernel profiles of mag's RGAT training step in both orders.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/c.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON -DHECTOR_BUILD_TESTS=OFF "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 170 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
timeout 50 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared" > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(tail -1 $R/san-memcheck.log) $(( $(date +%s) - t0 )) s"
DS=aifb,mutag,bgs,biokg,am,fb15k,mag,wikikg2
HECTOR_EDGE_ORDER=given timeout 100 python3 -m hector.bench.throughput --datasets $DS --models rgcn,rgat,hgt --modes inference,training --tag given >> $R/tp.jsonl 2>>$R/tp.err
echo "tp given rc=$? $(( $(date +%s) - t0 )) s"
timeout 100 python3 -m hector.bench.throughput --datasets $DS --models rgcn,rgat,hgt --modes inference,training --tag dst >> $R/tp.jsonl 2>>$R/tp.err
echo "tp dst rc=$? $(( $(date +%s) - t0 )) s"
python3 -m hector.bench.compare $R/tp.jsonl --baseline given
HECTOR_EDGE_ORDER=given timeout 35 python3 -m hector.bench.profile --datasets mag --models rgat --modes training --out $R/prof-given > $R/prof-given.log 2>&1
timeout 35 python3 -m hector.bench.profile --datasets mag --models rgat --modes training --out $R/prof-dst > $R/prof-dst.log 2>&1
echo "profiles $(grep -o 'kernels [0-9.]* ms' $R/prof-*/*.txt | tr '\n' ' ')"
echo "done $(( $(date +%s) - t0 )) s"

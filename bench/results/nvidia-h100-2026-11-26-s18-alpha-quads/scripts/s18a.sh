#!/usr/bin/env bash
# Session 18 call a: 17f5cd1's plain-call instantiation and the general-kernel
# fall-through for fused calls. Build (and d1eb7ee as build-old), GPU
# template tests (with and without tensor cores), hgt pytest, memcheck on the
# bias/parts GEMM cases and hgt_pyg, throughput A/B: HGT on am, mag,
# wikikg2; RGCN and RGAT on am.
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
bash bench/build-variant.sh old "" .devcmd/old > $R/build-old.log 2>&1; echo "build old rc=$? $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
./build-gpu/bin/templates_tests > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ')"
HECTOR_GEMM_MMA=0 ./build-gpu/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/*' > $R/templates-nomma.log 2>&1; echo "templates no-mma rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates-nomma.log | head -2 | tr '\n' ' ')"
timeout 60 python3 -m pytest tests/python/test_generated.py tests/python/test_nn.py -q -x -k "cuda and (hgt or tf32 or declared)" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-gpu/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda*/*Bias*:Table/SegmentGemm.Cuda*/*Parts*' > $R/san-memcheck-gemm.log 2>&1
echo "memcheck gemm rc=$? $(tail -1 $R/san-memcheck-gemm.log)"
for b in old gpu; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout $([ $b = old ] && echo 120 || echo 60) python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models hgt --modes inference,training --tag $b >> $R/tp.jsonl 2>>$R/tp.err
  HECTOR_BUILD_DIR=$PWD/build-$b timeout 40 python3 -m hector.bench.throughput --datasets am --models rgcn,rgat --modes inference,training --tag $b >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $b rc=$? $(( $(date +%s) - t0 )) s"
done
python3 -m hector.bench.compare $R/tp.jsonl --baseline old
echo "done $(( $(date +%s) - t0 )) s"

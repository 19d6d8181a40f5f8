#!/usr/bin/env bash
# Session 20 call a: the row dot in the GEMM epilogue (RGAT's alpha_1 =
# linear(outj, k) computed by outj's GEMM). Build (with the template tests)
# and 7d3672e as build-old (its own Python package), GPU template tests
# with and without tensor cores, memcheck on the row-dot GEMM cases, CUDA
# pytest of rgat_pyg, memcheck on its declared-hyper tests, throughput A/B
# of RGAT on the 8 datasets (both modes), RGAT inference profiles on am,
# mag, wikikg2.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/a.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
VARIANT_JOBS=6 bash bench/build-variant.sh old "" .devcmd/old > $R/build-old.log 2>&1 &
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j12 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
./build-gpu/bin/templates_tests > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ')"
HECTOR_GEMM_MMA=0 ./build-gpu/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/*' > $R/templates-nomma.log 2>&1; echo "templates no-mma rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates-nomma.log | head -2 | tr '\n' ' ')"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-gpu/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda*/*owDot*' > $R/san-memcheck-gemm.log 2>&1
echo "memcheck gemm rc=$? $(tail -1 $R/san-memcheck-gemm.log)"
timeout 120 python3 -m pytest tests/python -q -x -k "cuda and rgat" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared and rgat_pyg" > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(tail -1 $R/san-memcheck.log) $(( $(date +%s) - t0 )) s"
wait; echo "old built $(( $(date +%s) - t0 )) s"; tail -2 $R/build-old.log
A="--datasets aifb,mutag,bgs,biokg,am,fb15k,mag,wikikg2 --models rgat --modes inference,training"
for b in old new old new; do
  if [ $b = old ]; then PP=$PWD/.devcmd/old/runtime/python; BD=$PWD/build-old; else PP=$PWD/runtime/python; BD=$PWD/build-gpu; fi
  PYTHONPATH=$PP HECTOR_BUILD_DIR=$BD timeout 60 python3 -m hector.bench.throughput $A --tag $b >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $b rc=$? $(( $(date +%s) - t0 )) s"
done
python3 -m hector.bench.compare $R/tp.jsonl --baseline old
for b in old new; do
  if [ $b = old ]; then PP=$PWD/.devcmd/old/runtime/python; BD=$PWD/build-old; else PP=$PWD/runtime/python; BD=$PWD/build-gpu; fi
  PYTHONPATH=$PP HECTOR_BUILD_DIR=$BD timeout 60 python3 -m hector.bench.profile --datasets am,mag,wikikg2 --models rgat --modes inference --out $R/prof-$b > $R/prof-$b.log 2>&1
  echo "profile $b rc=$? $(( $(date +%s) - t0 )) s"
done
echo "done $(( $(date +%s) - t0 )) s"

#!/usr/bin/env bash
# Session 20 call g: c80b179 (the row-dot dispatch asks linearMmaFits only
# for calls with a row dot): GPU template tests, with and without tensor
# cores, and rgat_pyg's CUDA pytest.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/g.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
./build-gpu/bin/templates_tests > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ')"
HECTOR_GEMM_MMA=0 ./build-gpu/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/*' > $R/templates-nomma.log 2>&1; echo "templates no-mma rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates-nomma.log | head -2 | tr '\n' ' ')"
export PYTHONPATH=$PWD/runtime/python HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 120 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"

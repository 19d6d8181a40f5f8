#!/usr/bin/env bash
# On a GPU machine (no ANTLR, no network; CUDA, PyTorch with CUDA, pybind11,
# gtest headers, pytest, PyG): builds the runtime and the committed
# generated code against the torch found there with CUDA on, then runs the
# C++ tests and the Python tests (which then include their CUDA cases).
# Logs go to $OUT when that is set (the device tool's result folder).
set -euo pipefail
cd "$(dirname "$0")/.."

out="${OUT:-build-gpu/logs}"
mkdir -p "$out"
# Compilers, torch, pybind11 and the GPU's architecture.
source scripts/gpu-env.sh

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt" || true
"$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))' | tee -a "$out/gpu.txt"

cmake -S . -B build-gpu -G Ninja \
  -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON \
  "${hector_gpu_cmake_args[@]}" 2>&1 | tee "$out/configure.log"
cmake --build build-gpu -j "$(nproc)" 2>&1 | tee "$out/build.log" | tail -n 5

status=0
(cd build-gpu && ctest --output-on-failure -j 4) 2>&1 | tee "$out/ctest.log" || status=1
HECTOR_BUILD_DIR="$PWD/build-gpu" PYTHONPATH="$PWD/runtime/python" \
  "$python" -m pytest tests/python -q -ra "$@" 2>&1 | tee "$out/pytest.log" || status=1
exit $status

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
python="${HECTOR_PYTHON:-$(command -v python3)}"
# The image's default CXX wrapper links parts of libstdc++ statically into
# the extension, which then crashes formatting numbers inside torch; the
# system compiler builds a working one.
# nvcc's host compiler must be that one too: the generated layer libraries
# link CUDA objects into the same shared object as their torch binding.
if [ -x /usr/bin/g++ ]; then
  export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++
fi
torch_prefix="$("$python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')"
pybind_dir="$("$python" -m pybind11 --cmakedir 2>/dev/null || true)"

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt" || true
"$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))' | tee -a "$out/gpu.txt"

cmake -S . -B build-gpu -G Ninja \
  -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON \
  -DCMAKE_PREFIX_PATH="$torch_prefix" ${pybind_dir:+-Dpybind11_DIR="$pybind_dir"} \
  -DPYTHON_EXECUTABLE="$python" 2>&1 | tee "$out/configure.log"
cmake --build build-gpu -j "$(nproc)" 2>&1 | tee "$out/build.log" | tail -n 5

status=0
(cd build-gpu && ctest --output-on-failure -j 4) 2>&1 | tee "$out/ctest.log" || status=1
HECTOR_BUILD_DIR="$PWD/build-gpu" PYTHONPATH="$PWD/runtime/python" \
  "$python" -m pytest tests/python -q -ra "$@" 2>&1 | tee "$out/pytest.log" || status=1
exit $status

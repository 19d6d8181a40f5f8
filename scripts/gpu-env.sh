# Sourced by the scripts that build on a GPU machine (scripts/gpu-check.sh,
# gpu-bench.sh, gpu-reliability.sh, bench/build-variant.sh): the compilers,
# the Python that has torch, and `hector_gpu_cmake_args`, the CMake
# arguments that find torch and pybind11 and build CUDA code for this
# machine's GPU only.
#
# The system compiler builds a working extension, and nvcc's host compiler
# must be the same one.
if [ -x /usr/bin/g++ ]; then
  export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++
fi
python="${HECTOR_PYTHON:-$(command -v python3)}"
torch_prefix="$("$python" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')"
pybind_dir="$("$python" -m pybind11 --cmakedir 2>/dev/null || true)"
# The GPU's compute capability ("9.0" -> 90): one architecture instead of
# the default two halves nvcc's time on a cold machine. HECTOR_CUDA_ARCH
# overrides it; without nvidia-smi the project default stays.
cuda_arch="${HECTOR_CUDA_ARCH:-$(nvidia-smi --query-gpu=compute_cap \
  --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '. ')}"
hector_gpu_cmake_args=(
  -DCMAKE_PREFIX_PATH="$torch_prefix"
  -DPYTHON_EXECUTABLE="$python"
)
if [ -n "$pybind_dir" ]; then
  hector_gpu_cmake_args+=(-Dpybind11_DIR="$pybind_dir")
fi
if [[ "$cuda_arch" =~ ^[0-9]+$ ]]; then
  hector_gpu_cmake_args+=(-DCMAKE_CUDA_ARCHITECTURES="$cuda_arch")
fi

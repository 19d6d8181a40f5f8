#!/usr/bin/env bash
# Builds the bundled *_pyg libraries with several HECTOR_ELEMENTS_PER_WORKER_LANE
# and HECTOR_BATCH values, given as E:B (templates/traversal/Traversal.h) and profiles each on the GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++
python=python3
torch_prefix="$($python -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')"
pybind_dir="$($python -m pybind11 --cmakedir)"
for cfg in "$@"; do
  e=${cfg%:*}; batch=${cfg#*:}
  b=build-e$cfg
  cmake -S . -B $b -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON \
    -DHECTOR_WITH_TORCH=ON -DHECTOR_BUILD_TESTS=OFF \
    -DCMAKE_CUDA_FLAGS="-DHECTOR_ELEMENTS_PER_WORKER_LANE=$e -DHECTOR_BATCH=$batch" \
    -DCMAKE_PREFIX_PATH="$torch_prefix" -Dpybind11_DIR="$pybind_dir" \
    -DPYTHON_EXECUTABLE="$(command -v $python)" > /dev/null
  cmake --build $b -j 16 --target hector_C hector_rgcn_pyg hector_rgat_pyg hector_hgt_pyg 2>&1 | tail -1
done
for e in "$@"; do
  echo "=== elements per lane:batch $e"
  HECTOR_BUILD_DIR=$PWD/build-e$e PYTHONPATH=$PWD/runtime/python $python -m hector.bench.profile \
    --datasets mutag,fb15k,bgs --systems hector --modes inference --rows 4 --out ${OUT:-/tmp}/e$e 2>&1 \
    | grep -E "^== |forward_trav|hector_[a-z_]*::forward"
done

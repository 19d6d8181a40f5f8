#!/usr/bin/env bash
# On a GPU machine: builds the bundled *_pyg libraries (one build per TAG,
# with CMAKE_CUDA_FLAGS from PROBE_FLAGS_<TAG> when set), then for each
#   - times the forward on the synthetic graphs and on their hub-free twins
#     (python -m hector.bench.degree_probe, arguments from PROBE_ARGS),
#   - when NCU_KERNEL is set (a regex of kernel names), reads Nsight
#     Compute's counters of that kernel's first launch on the first dataset
#     (each launch-skip in NCU_SKIP, default 0).
# Usage: bench/kernel-probe.sh TAG...   (output on stdout and under $OUT)
set -uo pipefail
cd "$(dirname "$0")/.."
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++
python=python3
torch_prefix="$($python -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')"
pybind_dir="$($python -m pybind11 --cmakedir)"
out="${OUT:-/tmp}"
for tag in "$@"; do
  flags_var="PROBE_FLAGS_$tag"
  b=build-probe-$tag
  cmake -S . -B $b -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON \
    -DHECTOR_WITH_TORCH=ON -DHECTOR_BUILD_TESTS=OFF \
    -DCMAKE_CUDA_FLAGS="${!flags_var:-}" \
    -DCMAKE_PREFIX_PATH="$torch_prefix" -Dpybind11_DIR="$pybind_dir" \
    -DPYTHON_EXECUTABLE="$(command -v $python)" > /dev/null
  cmake --build $b -j 16 --target hector_C hector_rgcn_pyg hector_rgat_pyg \
    hector_hgt_pyg 2>&1 | tail -1
done
for tag in "$@"; do
  echo "=== $tag"
  export HECTOR_BUILD_DIR=$PWD/build-probe-$tag PYTHONPATH=$PWD/runtime/python
  # shellcheck disable=SC2086
  $python -m hector.bench.degree_probe ${PROBE_ARGS:-} 2>&1 | tee "$out/probe-$tag.txt"
  for skip in ${NCU_KERNEL:+${NCU_SKIP:-0}}; do
    echo "--- ncu $NCU_KERNEL launch $skip"
    ncu --clock-control none --kernel-name "regex:$NCU_KERNEL" \
      --launch-skip "$skip" --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section WarpStateStats --section SchedulerStats \
      --section MemoryWorkloadAnalysis \
      $python -m hector.bench.degree_probe ${PROBE_ARGS:-} --repeats 1 \
      > "$out/ncu-$tag-$skip.txt" 2>&1
    grep -E "Duration|Throughput|Occupancy|Registers|Block Size|Grid Size|Stall|Warp Cycles|Eligible|Issued|Hit Rate|Waves" "$out/ncu-$tag-$skip.txt" | head -40
  done
done

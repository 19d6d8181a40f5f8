#!/usr/bin/env bash
# On a GPU machine: configures and builds the runtime and the bundled *_pyg
# libraries into build-<TAG>/ with CMAKE_CUDA_FLAGS set to FLAGS (e.g.
# -DHECTOR_ELEMENTS_PER_WORKER_LANE=16), no tests, no compiler. Shared by
# bench/tune-lanes.sh and bench/kernel-probe.sh.
# Usage: bench/build-variant.sh TAG [FLAGS] [SOURCE]
# SOURCE: the source tree to build (default: this one), e.g. a copy whose
# generated/ is an older commit's, to time two versions of the generated
# kernels side by side (bench/kernel-probe.sh's PROBE_SOURCE_<TAG>).
set -uo pipefail
cd "$(dirname "$0")/.."
tag="$1"; flags="${2:-}"; src="${3:-.}"
source scripts/gpu-env.sh
cmake -S "$src" -B "build-$tag" -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON \
  -DHECTOR_WITH_TORCH=ON -DHECTOR_BUILD_TESTS=OFF -DCMAKE_CUDA_FLAGS="$flags" \
  "${hector_gpu_cmake_args[@]}" > /dev/null
cmake --build "build-$tag" -j "${VARIANT_JOBS:-$(nproc)}" --target hector_C hector_rgcn_pyg \
  hector_rgat_pyg hector_hgt_pyg 2>&1 | tail -1

#!/usr/bin/env bash
# Configures and builds Hector into build/ (hectorc in build/bin, libraries
# and the Python extension in build/lib). Extra arguments go to cmake's
# configure step, e.g. scripts/build.sh -DHECTOR_WITH_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="${HECTOR_BUILD_DIR:-build}"
jobs="${HECTOR_JOBS:-$(nproc)}"

# Debian's pybind11 looks for the python3 it was built for; point it (and
# torch's CMake config) at the system python, which has torch.
python="${HECTOR_PYTHON:-/usr/bin/python3}"

cmake -S . -B "$build_dir" -G Ninja \
  -DPYTHON_EXECUTABLE="$python" \
  "$@"
cmake --build "$build_dir" -j "$jobs"

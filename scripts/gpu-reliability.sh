#!/usr/bin/env bash
# On a GPU machine: the reliability checks of issue 10 in one call. Builds
# (build-gpu/, tests on, only the targets these checks need), then runs
#   - the GEMM template's CUDA tests (bitwise repeatability included),
#   - the CUDA cases of the generated-kernel, deterministic-mode and
#     bad-input tests, and the >2^31-element indexing test,
#   - scripts/gpu-sanitize.sh: compute-sanitizer memcheck, racecheck and
#     initcheck over the CUDA cases of the generated-kernel,
#     deterministic-mode and bad-input tests.
# Prints one line per step; logs go to $OUT (or build-gpu/logs).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-build-gpu/logs}"
mkdir -p "$out"
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | head -1

cmake -S . -B build-gpu -G Ninja \
  -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON \
  "${hector_gpu_cmake_args[@]}" >"$out/configure.log" 2>&1
cmake --build build-gpu -j "$(nproc)" --target hector_C hector_rgcn \
  hector_rgat hector_hgt hector_rgcn_pyg hector_rgat_pyg hector_hgt_pyg \
  templates_tests >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "build: ok"

export HECTOR_BUILD_DIR="$PWD/build-gpu" PYTHONPATH="$PWD/runtime/python"
status=0
step() { # name, command...
  local name="$1"; shift
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc; $(grep -E '[0-9]+ (passed|failed)|PASSED|FAILED|ERROR SUMMARY' "$out/$name.log" | tail -1)"
  [ $rc = 0 ] || status=1
}
step templates-cuda build-gpu/bin/templates_tests --gtest_filter='*Cuda*'
step pytest-cuda "$python" -m pytest -q -p no:cacheprovider -k cuda \
  tests/python/test_generated.py tests/python/test_deterministic.py \
  tests/python/test_bad_input.py
step large-index "$python" -m pytest -q -p no:cacheprovider \
  tests/python/test_large_index.py
OUT="$out" scripts/gpu-sanitize.sh || status=1
exit $status

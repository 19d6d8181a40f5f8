#!/usr/bin/env bash
# On a GPU machine (no ANTLR, no network; CUDA, PyTorch with CUDA, pybind11,
# PyG): builds the runtime, the bundled models and the benchmark's
# optimisation variants (bench/variants/, committed: the machine has no
# hectorc) with CUDA on, then runs `python -m hector.bench` with this
# script's arguments passed through.
#
#   scripts/gpu-bench.sh --build-only        configure and build, no bench
#   scripts/gpu-bench.sh --datasets aifb,mutag --models rgcn --modes inference
#   scripts/gpu-bench.sh --profile --datasets mutag --systems hector,hector-u
#                                            kernel profile (hector.bench.profile)
#
# The build goes to build-bench/ (not gpu-check.sh's build-gpu/, whose
# cache would then keep the variants on); a second call reuses it, so a
# long benchmark can be split over several calls. Results go to $OUT/bench
# when $OUT is set (the device tool's result folder) and the arguments give
# no --out; otherwise to hector.bench's default,
# bench/results/<gpu>-<date>/. Logs go to $OUT (or build-bench/logs).
set -euo pipefail
cd "$(dirname "$0")/.."

logs="${OUT:-build-bench/logs}"
mkdir -p "$logs"
source scripts/gpu-env.sh

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$logs/gpu.txt" || true
"$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))' | tee -a "$logs/gpu.txt"

cmake -S . -B build-bench -G Ninja \
  -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON \
  -DHECTOR_BUILD_TESTS=OFF -DHECTOR_BUILD_BENCH_VARIANTS=ON \
  "${hector_gpu_cmake_args[@]}" 2>&1 | tee "$logs/configure.log"
cmake --build build-bench -j "$(nproc)" 2>&1 | tee "$logs/build.log" | tail -n 5
if [ "${1:-}" = "--build-only" ]; then
  exit 0
fi
module=hector.bench
if [ "${1:-}" = "--profile" ]; then
  # Kernel-level profile instead of the benchmark (hector.bench.profile).
  module=hector.bench.profile
  shift
fi

out_args=()
if [ -n "${OUT:-}" ]; then
  case " $* " in
    *" --out "*|*" --out="*) ;;
    *) out_args=(--out "$OUT/${module##*.}") ;;
  esac
fi
HECTOR_BUILD_DIR="$PWD/build-bench" PYTHONPATH="$PWD/runtime/python" \
  "$python" -m "$module" ${out_args[@]+"${out_args[@]}"} "$@" 2>&1 | tee "$logs/bench.log"

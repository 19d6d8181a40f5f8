#!/usr/bin/env bash
# Session 44, call d: call c's whole templates_tests run stopped at its
# 150 s limit (662 cases passed, none failed: the CPU cases take most of
# the time), so this call runs every CUDA case of templates_tests (the
# filter below) on main d1d59a8, which call c's checks ran. Only the
# templates_tests target is built. (Its first run, without the machine's
# cmake arguments, found no torch; this is the second.)
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
{
  cmake -S . -B build-new -G Ninja -DHECTOR_BUILD_COMPILER=OFF \
    -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON -DHECTOR_BUILD_TESTS=ON \
    "${hector_gpu_cmake_args[@]}" &&
    cmake --build build-new -j 16 --target templates_tests
} > $R/build-new.log 2>&1
echo "build rc=$? $(gpu_elapsed)"
gpu_gtests new templates-cuda '*Cuda*:*cuda*:*CUDA*' "" 280
echo "done $(gpu_elapsed)"

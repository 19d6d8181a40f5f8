#!/usr/bin/env bash
# Session 14 call j: the read-through mends (stepSlice, epilogueScale,
# blocksForGroupChunks, currentDeviceSlot): templates_tests CUDA, CUDA
# pytest, memcheck.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -A5 error $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
./build-gpu/bin/templates_tests --gtest_filter='*Cuda*:ZeroFill*:GroupSum*:Quad*' > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|FAILED' $R/templates.log | head -3 | tr '\n' ' ')"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 120 python3 -m pytest tests/python/test_generated.py tests/python/test_deterministic.py tests/python/test_layers.py tests/python/test_nn.py tests/python/test_replay.py -q -k "cuda or replay or partial_row" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log)"
S=/usr/local/cuda/bin/compute-sanitizer; command -v compute-sanitizer >/dev/null && S=compute-sanitizer
timeout 90 $S --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and matches_interpreter and (rgat_pyg or hgt_pyg or rgcn_pyg) and (plain or split-hubs) and not heavy" > $R/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/memcheck.log | tail -1) $(grep -E 'passed|failed' $R/memcheck.log | tail -1)"
echo "done $(( $(date +%s) - t0 )) s"

#!/usr/bin/env bash
# Session 14 call c: correctness at HEAD (22e3cf0: arenas, remembered
# device queries, lane-split sums): templates_tests CUDA, CUDA pytest,
# memcheck on the generated ops, racecheck on groupSum.
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
./build-gpu/bin/templates_tests --gtest_filter='*Cuda*:ZeroFill*:GroupSum*:SplitsSum*' > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|FAILED' $R/templates.log | head -3 | tr '\n' ' ')"
./build-gpu/bin/runtime_tests --gtest_filter='BufferArena*' > $R/runtime.log 2>&1; echo "runtime rc=$? $(grep -E '^\[  PASSED|FAILED' $R/runtime.log | head -2 | tr '\n' ' ')"
S=/usr/local/cuda/bin/compute-sanitizer; command -v compute-sanitizer >/dev/null && S=compute-sanitizer
timeout 60 $S --tool racecheck --error-exitcode 99 ./build-gpu/bin/templates_tests --gtest_filter='GroupSum*' > $R/race-groupsum.log 2>&1
echo "racecheck groupSum rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $R/race-groupsum.log | tail -1)"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 240 python3 -m pytest tests/python/test_generated.py tests/python/test_deterministic.py tests/python/test_layers.py tests/python/test_nn.py tests/python/test_replay.py -q -k "cuda or replay or partial_row" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log)"
grep -E "FAILED|Error" $R/pytest.log | head -5
timeout 150 $S --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and matches_interpreter and (rgat_pyg or hgt_pyg or rgcn_pyg) and (plain or split-hubs) and not heavy" > $R/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/memcheck.log | tail -1) $(tail -1 $R/memcheck.log)"
echo "done $(( $(date +%s) - t0 )) s"

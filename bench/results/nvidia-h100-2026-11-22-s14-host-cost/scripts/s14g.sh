#!/usr/bin/env bash
# Session 14 call g: quad atomics. old = 22e3cf0, new = HEAD (754187a):
# templates_tests, CUDA pytest, memcheck; training profiles and throughput.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
t0=$(date +%s)
export VARIANT_JOBS=6
(bench/build-variant.sh old "" .devcmd/main-src > $R/build-old.log 2>&1) &
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j12 > $R/build.log 2>&1 || { grep -m5 -A5 error $R/build.log; exit 1; }
wait
echo "build $(( $(date +%s) - t0 )) s"
./build-gpu/bin/templates_tests --gtest_filter='*Cuda*:ZeroFill*:GroupSum*:Quad*' > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|FAILED' $R/templates.log | head -3 | tr '\n' ' ')"
grep -E "Quad" $R/templates.log | grep -E "OK|FAIL|SKIP" | head -4
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 200 python3 -m pytest tests/python/test_generated.py tests/python/test_deterministic.py tests/python/test_layers.py tests/python/test_nn.py tests/python/test_replay.py -q -k "cuda or replay or partial_row" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log)"
grep -E "^FAILED" $R/pytest.log | head -5
S=/usr/local/cuda/bin/compute-sanitizer; command -v compute-sanitizer >/dev/null && S=compute-sanitizer
timeout 120 $S --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and matches_interpreter and (rgat_pyg or hgt_pyg or rgcn_pyg) and (plain or split-hubs) and not heavy" > $R/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/memcheck.log | tail -1) $(grep -E 'passed|failed' $R/memcheck.log | tail -1)"
echo "tests $(( $(date +%s) - t0 )) s"
for b in old gpu; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout 60 python3 -m hector.bench.profile --datasets fb15k,am --models rgat,rgcn,hgt --modes training --rows 14 --out $R/prof-$b > $R/prof-$b.log 2>&1
done
echo "prof $(( $(date +%s) - t0 )) s"
for round in 1 2; do for b in old gpu; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout 50 python3 -m hector.bench.throughput --datasets bgs,fb15k,am --models rgat,rgcn --modes training --tag $b >> $R/tp.jsonl 2>>$R/tp.err
done; done
echo "done $(( $(date +%s) - t0 )) s"

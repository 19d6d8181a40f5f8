#!/usr/bin/env bash
# Session 18 call e: traversal element loops over quads (rowQuad: one
# 16-byte load per four elements of a row read at element i). Builds: gpu
# (the working tree), old (268647b, before), qu (the working tree with
# `#pragma unroll 4` on every worker edge loop of generated/*/kernels.cu,
# an experiment). Traversal template tests, CUDA pytest, racecheck on a
# subset; throughput A/B of all three models on am, mag, wikikg2.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/e.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
VARIANT_JOBS=8 bash bench/build-variant.sh old "" .devcmd/old > $R/build-old.log 2>&1 &
VARIANT_JOBS=8 bash bench/build-variant.sh qu "" .devcmd/qu > $R/build-qu.log 2>&1 &
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
./build-gpu/bin/templates_tests --gtest_filter='-*SegmentGemm*' > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ')"
timeout 150 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
wait; echo "variants built $(( $(date +%s) - t0 )) s"
for b in old gpu qu; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout $([ $b = old ] && echo 150 || echo 80) python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training --tag $b >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $b rc=$? $(( $(date +%s) - t0 )) s"
done
python3 -m hector.bench.compare $R/tp.jsonl --baseline old
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared and (rgcn_pyg or rgat_pyg)" > $R/san-racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-racecheck.log | tail -2 | tr '\n' ' ') $(tail -1 $R/san-racecheck.log)"
echo "done $(( $(date +%s) - t0 )) s"

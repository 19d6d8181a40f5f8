#!/usr/bin/env bash
# Session 18 call i: quads in flat edge and pair loops, and the quad atomics
# loading their operands as quads. Build (and the last commit as build-old),
# CUDA pytest, memcheck and racecheck, throughput A/B of the three models
# on am, mag, wikikg2 (both modes); kernel profiles of am training.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/i.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
VARIANT_JOBS=12 bash bench/build-variant.sh old "" .devcmd/old > $R/build-old.log 2>&1 &
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 150 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
wait; echo "old built $(( $(date +%s) - t0 )) s"
timeout 70 compute-sanitizer --tool racecheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared and (rgat_pyg or hgt_pyg)" > $R/san-racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY|Race reported' $R/san-racecheck.log | head -2) $(tail -1 $R/san-racecheck.log)"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared" > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(tail -1 $R/san-memcheck.log) $(( $(date +%s) - t0 )) s"
for b in old gpu; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout $([ $b = old ] && echo 150 || echo 80) python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training --tag $b >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $b rc=$? $(( $(date +%s) - t0 )) s"
done
python3 -m hector.bench.compare $R/tp.jsonl --baseline old
for b in old gpu; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout 50 python3 -m hector.bench.profile --datasets am --models rgat,hgt --modes training --out $R/prof-$b > $R/prof-$b.log 2>&1
  echo "profile $b rc=$? $(grep -o 'kernels [0-9.]* ms' $R/prof-$b/*.txt | tr '\n' ' ')"
done
echo "done $(( $(date +%s) - t0 )) s"

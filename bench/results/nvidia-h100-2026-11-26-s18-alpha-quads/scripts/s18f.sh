#!/usr/bin/env bash
# Session 18 call f: quads only in worker-split edge loops, none for
# partial-atomic or hoisted stores (call e's racecheck error). Build (and
# 268647b as build-old), traversal template tests, CUDA pytest, racecheck
# and memcheck on the declared-hyper tests, throughput A/B of the three
# models on am, mag, wikikg2, then the harness (hector, hector-cr).
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/f.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
VARIANT_JOBS=12 bash bench/build-variant.sh old "" .devcmd/old > $R/build-old.log 2>&1 &
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
./build-gpu/bin/templates_tests --gtest_filter='-*SegmentGemm*' > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ')"
timeout 150 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
wait; echo "old built $(( $(date +%s) - t0 )) s"
for tool in racecheck memcheck; do
timeout 80 compute-sanitizer --tool $tool --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared" > $R/san-$tool.log 2>&1
echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-$tool.log | tail -1) $(tail -1 $R/san-$tool.log) $(( $(date +%s) - t0 )) s"
done
for b in old gpu; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout $([ $b = old ] && echo 150 || echo 80) python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training --tag $b >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $b rc=$? $(( $(date +%s) - t0 )) s"
done
python3 -m hector.bench.compare $R/tp.jsonl --baseline old
left=$(( 570 - ($(date +%s) - t0) ))
[ $left -gt 60 ] && timeout $left python3 -m hector.bench --systems hector,hector-cr --models rgat,rgcn,hgt --case-timeout 20 --no-chart --out $R/harness > $R/harness.log 2>&1
echo "harness rc=$? left=$left $(( $(date +%s) - t0 )) s"
tail -3 $R/harness.log
echo "done $(( $(date +%s) - t0 )) s"

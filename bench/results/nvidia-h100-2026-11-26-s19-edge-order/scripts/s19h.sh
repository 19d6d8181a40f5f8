#!/usr/bin/env bash
# Session 19 call h: hub splitting for node-row kernels with atomic adds
# (a node-level atomic add runs in the hub's first part only). Build (and
# 230bc9d as build-old, with its own Python package), CUDA pytest,
# racecheck and memcheck on the split kernels' models, training A/B on
# biokg, am, mag, wikikg2; am RGCN training profile.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/h.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON -DHECTOR_BUILD_TESTS=OFF "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
VARIANT_JOBS=10 bash bench/build-variant.sh old "" .devcmd/old > $R/build-old.log 2>&1 &
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 150 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
wait; echo "old built $(( $(date +%s) - t0 )) s"
timeout 80 compute-sanitizer --tool racecheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and split-hubs and not heavy-first and (rgcn_pyg or rgat-1 or hgt-1)" > $R/san-racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' $R/san-racecheck.log | head -1) $(tail -1 $R/san-racecheck.log)"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and hub" > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(tail -1 $R/san-memcheck.log) $(( $(date +%s) - t0 )) s"
A="--datasets biokg,am,mag,wikikg2 --models rgcn,rgat,hgt --modes training"
PYTHONPATH=$PWD/.devcmd/old/runtime/python HECTOR_BUILD_DIR=$PWD/build-old timeout 80 python3 -m hector.bench.throughput $A --tag old >> $R/tp.jsonl 2>>$R/tp.err
echo "tp old rc=$? $(( $(date +%s) - t0 )) s"
timeout 80 python3 -m hector.bench.throughput $A --tag new >> $R/tp.jsonl 2>>$R/tp.err
echo "tp new rc=$? $(( $(date +%s) - t0 )) s"
python3 -m hector.bench.compare $R/tp.jsonl --baseline old
timeout 40 python3 -m hector.bench.profile --datasets am --models rgcn --modes training --out $R/prof-new > $R/prof-new.log 2>&1
PYTHONPATH=$PWD/.devcmd/old/runtime/python HECTOR_BUILD_DIR=$PWD/build-old timeout 40 python3 -m hector.bench.profile --datasets am --models rgcn --modes training --out $R/prof-old > $R/prof-old.log 2>&1
for f in $R/prof-*/*.txt; do echo "$f $(grep -o 'step [0-9.]* ms.*' $f)"; grep -E "backward_trav_2" $f | cut -c1-90,190-250; done
echo "done $(( $(date +%s) - t0 )) s"

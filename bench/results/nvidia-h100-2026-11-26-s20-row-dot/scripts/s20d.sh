#!/usr/bin/env bash
# Session 20 call d: acc3be2, the narrow attention weight recomputed per
# lane inside the message loop (no syncs in RGAT's and HGT's forward
# message loops), against 5dd6d55 (old, its own Python package). CUDA
# pytest of every model, racecheck on rgat_pyg's and hgt_pyg's
# declared-hyper tests and on their split-hub tests (heads 1 and 2),
# memcheck on the declared-hyper tests, throughput A/B of RGAT and HGT.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/d.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
VARIANT_JOBS=6 bash bench/build-variant.sh old "" .devcmd/old > $R/build-old.log 2>&1 &
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON -DHECTOR_BUILD_TESTS=OFF "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j10 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 120 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
for k in "declared and rgat_pyg" "declared and hgt_pyg" "matches_interpreter and (rgat_pyg or hgt_pyg) and split-hubs and not heavy-first"; do
  f=$R/san-racecheck-$(echo "$k" | tr -c 'a-z0-9' '_' | cut -c1-40).log
  timeout 80 compute-sanitizer --tool racecheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and $k" > $f 2>&1
  echo "racecheck [$k] rc=$? $(grep -E 'RACECHECK SUMMARY' $f | sort | uniq -c | tr '\n' ' ') $(tail -1 $f)"
done
timeout 50 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared" > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(tail -1 $R/san-memcheck.log) $(( $(date +%s) - t0 )) s"
wait; echo "old built $(( $(date +%s) - t0 )) s"; tail -1 $R/build-old.log
A="--datasets aifb,mutag,bgs,biokg,am,fb15k,mag,wikikg2 --models rgat,hgt --modes inference,training"
B="--datasets am,mag,wikikg2 --models rgat,hgt --modes inference,training"
for run in "old A" "new A" "old B" "new B"; do
  set -- $run; b=$1; sel=${!2}
  if [ $b = old ]; then PP=$PWD/.devcmd/old/runtime/python; BD=$PWD/build-old; else PP=$PWD/runtime/python; BD=$PWD/build-gpu; fi
  PYTHONPATH=$PP HECTOR_BUILD_DIR=$BD timeout 80 python3 -m hector.bench.throughput $sel --tag $b >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $run rc=$? $(( $(date +%s) - t0 )) s"
done
python3 -m hector.bench.compare $R/tp.jsonl --baseline old
echo "done $(( $(date +%s) - t0 )) s"

#!/usr/bin/env bash
# Session 14 call i: heavy-row blocks of 512 and 256 threads
# (-DHECTOR_HEAVY_GROUP_SIZE) against 1024 (HEAD), now that hubs split over
# blocks: CUDA pytest and memcheck on the variants, throughput.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
t0=$(date +%s)
export VARIANT_JOBS=5
(bench/build-variant.sh h512 "-DHECTOR_HEAVY_GROUP_SIZE=512" > $R/build-h512.log 2>&1) &
(bench/build-variant.sh h256 "-DHECTOR_HEAVY_GROUP_SIZE=256" > $R/build-h256.log 2>&1) &
bench/build-variant.sh base "" > $R/build-base.log 2>&1
wait
echo "build $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
S=/usr/local/cuda/bin/compute-sanitizer; command -v compute-sanitizer >/dev/null && S=compute-sanitizer
for v in h512 h256; do
  HECTOR_BUILD_DIR=$PWD/build-$v timeout 60 python3 -m pytest tests/python/test_generated.py -q -k "cuda and (rgat_pyg or rgcn_pyg or hgt_pyg)" > $R/pytest-$v.log 2>&1
  echo "pytest $v rc=$? $(tail -1 $R/pytest-$v.log)"
done
HECTOR_BUILD_DIR=$PWD/build-h512 timeout 60 $S --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and matches_interpreter and (rgat_pyg or hgt_pyg or rgcn_pyg) and (hub or heavy) " > $R/memcheck-h512.log 2>&1
echo "memcheck h512 rc=$? $(grep -E 'ERROR SUMMARY' $R/memcheck-h512.log | tail -1) $(grep -E 'passed|failed' $R/memcheck-h512.log | tail -1)"
echo "tests $(( $(date +%s) - t0 )) s"
for v in base h512 h256; do
  HECTOR_BUILD_DIR=$PWD/build-$v timeout 75 python3 -m hector.bench.throughput --datasets mutag,bgs,fb15k,biokg,am --models rgat,rgcn --tag $v >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $v $(( $(date +%s) - t0 )) s"
done

#!/usr/bin/env bash
# Session 14 call b: host cost A/B: old = HEAD (4702e33), new = working
# tree (temps in arenas, device queries remembered); a CUDA pytest subset.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
t0=$(date +%s)
bench/build-variant.sh new "" > $R/build-new.log 2>&1 || { tail -20 $R/build-new.log; exit 1; }
grep -q "error" $R/build-new.log && { grep -m3 -A5 error $R/build-new.log; exit 1; }
echo "build new $(( $(date +%s) - t0 )) s"
bench/build-variant.sh old "" .devcmd/main-src > $R/build-old.log 2>&1
echo "build old $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
for round in 1 2; do
  for b in old new; do
    TAG=$b HECTOR_BUILD_DIR=$PWD/build-$b timeout 100 python3 .devcmd/hostparts.py aifb,mutag,fb15k rgat,rgcn hector-cr,hector >> $R/parts.jsonl 2>> $R/parts.err
  done
done
echo "parts $(( $(date +%s) - t0 )) s"
for b in old new; do
  TAG=$b HECTOR_BUILD_DIR=$PWD/build-$b timeout 60 python3 .devcmd/hostcost.py aifb,mutag,bgs,fb15k rgat,rgcn hector-cr,hector >> $R/cost.jsonl 2>> $R/cost.err
done
echo "cost $(( $(date +%s) - t0 )) s"
HECTOR_BUILD_DIR=$PWD/build-new timeout 150 python3 -m pytest tests/python/test_generated.py tests/python/test_layers.py -q -k "cuda and pyg" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log)"
echo "done $(( $(date +%s) - t0 )) s"

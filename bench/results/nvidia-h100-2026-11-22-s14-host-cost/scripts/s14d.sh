#!/usr/bin/env bash
# Session 14 call d: old = 4702e33 (session start), new = HEAD 22e3cf0
# (arenas, remembered device queries, lane-split sums): training
# profiles, RGAT training throughput A/B, synchronised-step host A/B.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
t0=$(date +%s)
export VARIANT_JOBS=8
(bench/build-variant.sh old "" .devcmd/main-src > $R/build-old.log 2>&1) &
bench/build-variant.sh new "" > $R/build-new.log 2>&1
wait
echo "build $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
for b in old new; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout 70 python3 -m hector.bench.profile --datasets fb15k,am --models rgat,hgt --modes training --rows 16 --out $R/prof-$b > $R/prof-$b.log 2>&1
done
echo "prof $(( $(date +%s) - t0 )) s"
for round in 1 2; do for b in old new; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout 75 python3 -m hector.bench.throughput --datasets aifb,mutag,bgs,fb15k,am --models rgat --modes training --tag $b >> $R/tp.jsonl 2>>$R/tp.err
done; done
echo "tp $(( $(date +%s) - t0 )) s"
for b in old new old new; do
  TAG=$b HECTOR_BUILD_DIR=$PWD/build-$b timeout 40 python3 .devcmd/hostcost.py aifb,mutag rgat,hgt hector-cr,hector >> $R/cost.jsonl 2>> $R/cost.err
done
echo "done $(( $(date +%s) - t0 )) s"

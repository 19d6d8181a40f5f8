#!/usr/bin/env bash
# Session 19 call f: why small graphs' RGAT training lost time after
# f1f9c15. Kernel profiles of aifb, mutag and fb15k RGAT training for
# ca0096c (old), f1f9c15 on the given numbering (given) and f1f9c15
# (dst); then 200-step throughput, old and new interleaved twice.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/f.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
VARIANT_JOBS=6 bash bench/build-variant.sh old "" .devcmd/old > $R/build-old.log 2>&1 &
VARIANT_JOBS=10 bash bench/build-variant.sh new "" . > $R/build-new.log 2>&1
wait; echo "built $(( $(date +%s) - t0 )) s"
P="--datasets aifb,mutag,fb15k --models rgat --modes training"
OLDPY=$PWD/.devcmd/old/runtime/python NEWPY=$PWD/runtime/python
PYTHONPATH=$OLDPY HECTOR_BUILD_DIR=$PWD/build-old timeout 60 python3 -m hector.bench.profile $P --out $R/prof-old > $R/prof-old.log 2>&1
PYTHONPATH=$NEWPY HECTOR_BUILD_DIR=$PWD/build-new HECTOR_EDGE_ORDER=given timeout 60 python3 -m hector.bench.profile $P --out $R/prof-given > $R/prof-given.log 2>&1
PYTHONPATH=$NEWPY HECTOR_BUILD_DIR=$PWD/build-new timeout 60 python3 -m hector.bench.profile $P --out $R/prof-dst > $R/prof-dst.log 2>&1
for f in $R/prof-*/*.txt; do echo "$f $(grep -o 'step [0-9.]* ms.*' $f)"; done
echo "profiles $(( $(date +%s) - t0 )) s"
A="--datasets aifb,mutag,bgs,fb15k --models rgat,hgt --modes training --steps 200 --warmup 20"
for i in 1 2; do
  PYTHONPATH=$OLDPY HECTOR_BUILD_DIR=$PWD/build-old timeout 60 python3 -m hector.bench.throughput $A --tag old >> $R/tp.jsonl 2>>$R/tp.err
  PYTHONPATH=$NEWPY HECTOR_BUILD_DIR=$PWD/build-new timeout 60 python3 -m hector.bench.throughput $A --tag new >> $R/tp.jsonl 2>>$R/tp.err
done
PYTHONPATH=$NEWPY python3 -m hector.bench.compare $R/tp.jsonl --baseline old
echo "done $(( $(date +%s) - t0 )) s"

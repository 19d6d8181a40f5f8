#!/usr/bin/env bash
# Session 20 call e: is call d's fb15k HGT slowdown (0.58x) real? acc3be2
# against 5dd6d55 (own Python package): small-graph throughput of RGAT and
# HGT in three interleaved rounds, and fb15k and aifb HGT inference
# kernel profiles of both.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/e.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
VARIANT_JOBS=8 bash bench/build-variant.sh old "" .devcmd/old > $R/build-old.log 2>&1 &
VARIANT_JOBS=8 bash bench/build-variant.sh gpu "" . > $R/build.log 2>&1 &
wait; echo "built $(( $(date +%s) - t0 )) s"; tail -1 $R/build.log; tail -1 $R/build-old.log
A="--datasets aifb,mutag,bgs,fb15k --models rgat,hgt --modes inference,training"
for run in old new old new old new; do
  if [ $run = old ]; then PP=$PWD/.devcmd/old/runtime/python; BD=$PWD/build-old; else PP=$PWD/runtime/python; BD=$PWD/build-gpu; fi
  PYTHONPATH=$PP HECTOR_BUILD_DIR=$BD timeout 60 python3 -m hector.bench.throughput $A --tag $run >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $run rc=$? $(( $(date +%s) - t0 )) s"
done
python3 -m hector.bench.compare $R/tp.jsonl --baseline old
for b in old new; do
  if [ $b = old ]; then PP=$PWD/.devcmd/old/runtime/python; BD=$PWD/build-old; else PP=$PWD/runtime/python; BD=$PWD/build-gpu; fi
  PYTHONPATH=$PP HECTOR_BUILD_DIR=$BD timeout 60 python3 -m hector.bench.profile --datasets fb15k,aifb --models hgt --modes inference --out $R/prof-$b > $R/prof-$b.log 2>&1
  echo "profile $b rc=$? $(( $(date +%s) - t0 )) s"
  for f in $R/prof-$b/*.txt; do echo "== $b $(basename $f)"; grep -E "trav|linear|step" $f | awk '{print substr($0,1,80), $(NF-3), $(NF-1), $NF}'; done
done
echo "done $(( $(date +%s) - t0 )) s"

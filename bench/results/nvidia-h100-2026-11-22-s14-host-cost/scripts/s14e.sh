#!/usr/bin/env bash
# Session 14 call e: at HEAD (22e3cf0): the heavy and warp launches side by
# side on mid-size graphs (HECTOR_HEAVY_FIRST_EDGES=0) against chained
# (default), RGAT throughput; then the harness, 3 models, hector and
# hector-cr, 8 datasets.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
t0=$(date +%s)
bench/build-variant.sh cr "" > $R/build.log 2>&1
echo "build $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-cr
for round in 1 2; do
  timeout 60 python3 -m hector.bench.throughput --datasets bgs,fb15k,biokg --models rgat,hgt --tag chained >> $R/tp-overlap.jsonl 2>>$R/tp.err
  HECTOR_HEAVY_FIRST_EDGES=0 timeout 60 python3 -m hector.bench.throughput --datasets bgs,fb15k,biokg --models rgat,hgt --tag overlap >> $R/tp-overlap.jsonl 2>>$R/tp.err
done
echo "tp $(( $(date +%s) - t0 )) s"
timeout 420 python3 -m hector.bench --systems hector,hector-cr --models rgat,rgcn,hgt --case-timeout 20 --no-chart --out $R/x > $R/x.log 2>&1
echo "harness rc=$? $(( $(date +%s) - t0 )) s"
tail -3 $R/x.log

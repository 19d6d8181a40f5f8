#!/usr/bin/env bash
# Session 14 call h: the harness at HEAD (754187a, quad atomics), 3 models,
# hector and hector-cr, 8 datasets.
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
timeout 400 python3 -m hector.bench --systems hector,hector-cr --models rgat,rgcn,hgt --case-timeout 20 --no-chart --out $R/x > $R/x.log 2>&1
echo "harness rc=$? $(( $(date +%s) - t0 )) s"
tail -2 $R/x.log

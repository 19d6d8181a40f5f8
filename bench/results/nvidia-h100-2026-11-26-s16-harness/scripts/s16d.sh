#!/usr/bin/env bash
# Session 16 call d: the harness at HEAD, 3 models, hector and hector-cr,
# 8 datasets (as session 14's call h), on the build call c left.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/d.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 520 python3 -m hector.bench --systems hector,hector-cr --models rgat,rgcn,hgt --case-timeout 20 --no-chart --out $R/x > $R/x.log 2>&1
echo "harness rc=$? $(( $(date +%s) - t0 )) s"
tail -2 $R/x.log

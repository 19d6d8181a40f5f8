#!/usr/bin/env bash
# Session 20 call f: the harness (hector, hector-cr, 8 datasets) at acc3be2.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/f.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
VARIANT_JOBS=16 bash bench/build-variant.sh gpu "" . > $R/build.log 2>&1; echo "built $(( $(date +%s) - t0 )) s"; tail -1 $R/build.log
export PYTHONPATH=$PWD/runtime/python HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 200 python3 -m hector.bench --systems hector,hector-cr --models rgat,rgcn,hgt --case-timeout 20 --no-chart --out $R/harness > $R/harness.log 2>&1
echo "harness rc=$? $(( $(date +%s) - t0 )) s"
tail -2 $R/harness.log

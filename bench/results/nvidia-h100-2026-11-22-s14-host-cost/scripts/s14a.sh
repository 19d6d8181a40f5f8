#!/usr/bin/env bash
# Session 14 call a: host time of a training step, part by part, at HEAD.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
lscpu | grep -E "Model name|MHz" > $R/cpu.txt
t0=$(date +%s)
bench/build-variant.sh cr "" > $R/build.log 2>&1
echo "build $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-cr
timeout 240 python3 .devcmd/hostparts.py aifb,mutag,fb15k rgat,rgcn,hgt > $R/parts.jsonl 2> $R/parts.err
echo "parts rc=$?"; cat $R/parts.jsonl; tail -3 $R/parts.err
timeout 60 python3 .devcmd/cpuprof.py aifb rgat hector-cr $R/cpuprof-aifb-rgat.txt 2> $R/cpuprof.err; echo "cpuprof rc=$?"
head -30 $R/cpuprof-aifb-rgat.txt
echo "done $(( $(date +%s) - t0 )) s"

#!/usr/bin/env bash
# Session 14 call f: at HEAD (22e3cf0): the drop-in's Python (cProfile,
# hector against hector-cr), CUDA graph replay against eager on the small
# graphs (synchronised steps), the host parts of a step.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/r.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
lscpu | grep -E "Model name" > $R/cpu.txt
t0=$(date +%s)
bench/build-variant.sh cr "" > $R/build.log 2>&1
echo "build $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-cr
timeout 90 python3 .devcmd/nnprof.py fb15k rgat hector,hector-cr > $R/nnprof-fb15k-rgat.txt 2>&1
echo "nnprof $(( $(date +%s) - t0 )) s"
for round in 1 2; do
  TAG=eager timeout 60 python3 .devcmd/hostcost.py aifb,mutag,bgs rgat,rgcn,hgt hector-cr >> $R/replay.jsonl 2>> $R/replay.err
  TAG=replay HECTOR_CUDA_GRAPHS=1 timeout 60 python3 .devcmd/hostcost.py aifb,mutag,bgs rgat,rgcn,hgt hector-cr >> $R/replay.jsonl 2>> $R/replay.err
done
echo "replay $(( $(date +%s) - t0 )) s"
TAG=head timeout 60 python3 .devcmd/hostparts.py aifb,mutag,fb15k rgat,rgcn hector-cr,hector > $R/parts.jsonl 2> $R/parts.err
echo "done $(( $(date +%s) - t0 )) s"

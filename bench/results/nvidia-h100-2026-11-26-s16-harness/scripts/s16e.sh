#!/usr/bin/env bash
# Session 16 call e: racecheck on the worker-split kernels (call c's timed
# out), HGT small-graph A/B against 7a5d08b in alternating rounds, and two
# more harness rounds of RGAT on the four small graphs (their times are
# host-bound and move between runs).
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/e.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
S=compute-sanitizer
timeout 150 $S --tool racecheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and ((matches_interpreter and plain and (hgt_pyg or hgt-2 or rgat-2)) or (declared and hgt_pyg and plain))" > $R/racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $R/racecheck.log | tail -1) $(grep -E 'passed|failed' $R/racecheck.log | tail -1) $(( $(date +%s) - t0 )) s"
for i in 1 2; do
  timeout 60 python3 -m hector.bench --systems hector,hector-cr --models rgat --datasets aifb,mutag,bgs,fb15k --case-timeout 20 --no-chart --out $R/x$i > $R/x$i.log 2>&1
  echo "harness $i rc=$? $(( $(date +%s) - t0 )) s"
done
bench/build-variant.sh prev "" .devcmd/prev > $R/build-prev.log 2>&1
echo "build prev rc=$? $(( $(date +%s) - t0 )) s"
for i in 1 2; do
  for tag in prev head; do
    d=$PWD/build-gpu; [ $tag = prev ] && d=$PWD/build-prev
    HECTOR_BUILD_DIR=$d timeout 40 python3 -m hector.bench.throughput --datasets aifb,mutag,bgs,fb15k --models hgt --modes inference,training --tag $tag >> $R/tp.jsonl 2>>$R/tp.err
    echo "tp $tag $i rc=$? $(( $(date +%s) - t0 )) s"
  done
done
python3 - "$R/tp.jsonl" <<'PY'
import json, sys, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    r = json.loads(line); d[r["case"]][r["tag"]].append(r["ms"])
for c in sorted(d):
    x = d[c]
    if x["prev"] and x["head"]:
        a, b = min(x["prev"]), min(x["head"])
        print(f"{c:28s} prev {x['prev']}  head {x['head']}  best {a/b:.3f}x")
PY
grep -h "rgat" $R/x1/table.md $R/x2/table.md | grep -E "^\| (aifb|mutag|bgs|fb15k)" | head -16
echo "done $(( $(date +%s) - t0 )) s"

#!/usr/bin/env bash
# Session 17 call e: the row queue hands out batches of consecutive rows
# (Traversal.h rowQueueBatch). Build (and ab7690d from .devcmd/old as
# build-old), GPU template tests, CUDA pytest, memcheck on queued cases;
# Nsight Compute of am's queued warp launches (serial mode); kernel time
# per step on the small graphs (queued by default) old/new; throughput on
# the large graphs, side by side (default) and serial (queued), new only.
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
bash bench/build-variant.sh old "" .devcmd/old > $R/build-old.log 2>&1; echo "build old rc=$? $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
./build-gpu/bin/templates_tests > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ')"
timeout 120 python3 -m pytest tests/python/test_generated.py tests/python/test_deterministic.py tests/python/test_layers.py tests/python/test_nn.py tests/python/test_replay.py -q -x -k "cuda or replay or partial_row or declared" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and (partial_row or (matches_interpreter and (rgat_pyg or hgt_pyg or rgcn_pyg) and plain))" > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(grep -E 'passed|failed' $R/san-memcheck.log | tail -1) $(( $(date +%s) - t0 )) s"
M="--metrics gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg,dram__throughput.avg.pct_of_peak_sustained_elapsed"
HECTOR_HEAVY_FIRST_EDGES=1000000000000 timeout 60 ncu --clock-control none $M -k regex:"forward_trav" python3 -m hector.bench.profile --datasets am --models rgcn,rgat,hgt --modes inference --steps 1 --warmup 0 --rows 4 > $R/ncu-serial.txt 2>&1
echo "ncu serial rc=$? $(( $(date +%s) - t0 )) s"
for b in old gpu; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout 80 python3 -m hector.bench.profile --datasets aifb,mutag,bgs,fb15k --models rgcn,rgat,hgt --modes inference,training --out $R/prof-$b > $R/prof-$b.log 2>&1
  echo "profile $b rc=$? $(( $(date +%s) - t0 )) s"
done
for f in $R/prof-gpu/*.txt; do n=$(basename $f); echo "$n old $(grep -o 'kernels [0-9.]* ms' $R/prof-old/$n) new $(grep -o 'kernels [0-9.]* ms' $f)"; done
for round in 1 2; do
  timeout 70 python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training --tag overlap >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp overlap $round rc=$? $(( $(date +%s) - t0 )) s"
  [ $(( $(date +%s) - t0 )) -lt 520 ] && HECTOR_HEAVY_FIRST_EDGES=1000000000000 timeout 60 python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training --tag serial >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp serial $round rc=$? $(( $(date +%s) - t0 )) s"
done
python3 - "$R/tp.jsonl" <<'PY'
import json, sys, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    r = json.loads(line); d[r["case"]][r["tag"]].append(r["ms"])
for c in sorted(d):
    b = d[c]
    if b["overlap"] and b["serial"]:
        o, s = min(b["overlap"]), min(b["serial"])
        print(f"{c:26s} overlap {o:8.3f} serial {s:8.3f} {o/s:.3f}x")
PY
echo "done $(( $(date +%s) - t0 )) s"

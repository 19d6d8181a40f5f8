#!/usr/bin/env bash
# Session 17 call d: at ab7690d (whole heavy rows off a queue), the heavy
# and warp launches one after the other (HECTOR_HEAVY_FIRST_EDGES huge:
# the warp launch then takes the row queue) against side by side (the
# default on graphs of 2^20 edges or more), two alternating rounds; Nsight
# Compute on the serial launches; racecheck on the split-hub cases.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/d.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON -DHECTOR_BUILD_TESTS=OFF "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 --target hector_C hector_rgcn_pyg hector_rgat_pyg hector_hgt_pyg > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
S=compute-sanitizer
K="cuda and matches_interpreter and (rgat_pyg or hgt_pyg or rgcn_pyg) and split-hubs and not heavy-first"
timeout 80 $S --tool racecheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "$K" > $R/san-racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' $R/san-racecheck.log | tail -1) $(grep -E 'passed|failed' $R/san-racecheck.log | tail -1) $(( $(date +%s) - t0 )) s"
for round in 1 2; do
  timeout 90 python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training --tag overlap >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp overlap $round rc=$? $(( $(date +%s) - t0 )) s"
  HECTOR_HEAVY_FIRST_EDGES=1000000000000 timeout 70 python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training --tag serial >> $R/tp.jsonl 2>>$R/tp.err
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
        print(f"{c:26s} overlap {o:8.3f} serial {s:8.3f} {o/s:.3f}x  (rounds {b['overlap']} {b['serial']})")
PY
M="--metrics gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg,dram__throughput.avg.pct_of_peak_sustained_elapsed"
HECTOR_HEAVY_FIRST_EDGES=1000000000000 timeout 60 ncu --clock-control none $M -k regex:"forward_trav" python3 -m hector.bench.profile --datasets am --models rgcn,rgat,hgt --modes inference --steps 1 --warmup 0 --rows 4 > $R/ncu-serial.txt 2>&1
echo "ncu serial rc=$? $(( $(date +%s) - t0 )) s"
echo "done $(( $(date +%s) - t0 )) s"

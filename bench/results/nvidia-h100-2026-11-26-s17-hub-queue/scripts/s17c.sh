#!/usr/bin/env bash
# Session 17 call c: whole heavy rows off a queue in the split heavy launch
# (HubSplit.h hubNextItem), and the switch HECTOR_QUEUE_BESIDE_HEAVY. Build
# (and 89950b8 from .devcmd/old as build-old), CUDA pytest (split hubs,
# also with the queue beside the heavy launch), sanitizers on the split
# cases, heavy-launch SM activity (ncu), throughput A/B and the queue beside
# the heavy launch.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/c.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
bash bench/build-variant.sh old "" .devcmd/old > $R/build-old.log 2>&1; echo "build old rc=$? $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
./build-gpu/bin/templates_tests --gtest_filter='HubSplit*:*Cuda*' > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ')"
timeout 120 python3 -m pytest tests/python/test_generated.py tests/python/test_layers.py tests/python/test_nn.py -q -x -k "cuda or declared" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
HECTOR_QUEUE_BESIDE_HEAVY=1 timeout 60 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and heavy-first" > $R/pytest-queue-beside.log 2>&1
echo "pytest queue-beside rc=$? $(tail -1 $R/pytest-queue-beside.log) $(( $(date +%s) - t0 )) s"
S=compute-sanitizer
K="cuda and matches_interpreter and (rgat_pyg or hgt_pyg or rgcn_pyg) and split-hubs and not heavy-first"
for tool in memcheck synccheck; do
  timeout 45 $S --tool $tool --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "$K" > $R/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-$tool.log | tail -1) $(grep -E 'passed|failed' $R/san-$tool.log | tail -1) $(( $(date +%s) - t0 )) s"
done
M="--metrics gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg,dram__throughput.avg.pct_of_peak_sustained_elapsed"
for b in gpu; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout 60 ncu --clock-control none $M -k regex:"forward_trav" python3 -m hector.bench.profile --datasets am --models rgcn,rgat,hgt --modes inference --steps 1 --warmup 0 --rows 4 > $R/ncu-$b.txt 2>&1
  echo "ncu $b rc=$? $(( $(date +%s) - t0 )) s"
done
for b in old gpu; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout $([ $b = old ] && echo 150 || echo 70) python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training --tag $b >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $b rc=$? $(( $(date +%s) - t0 )) s"
done
[ $(( $(date +%s) - t0 )) -lt 520 ] && HECTOR_QUEUE_BESIDE_HEAVY=1 timeout 60 python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training --tag queue-beside >> $R/tp.jsonl 2>>$R/tp.err
echo "tp queue-beside rc=$? $(( $(date +%s) - t0 )) s"
python3 - "$R/tp.jsonl" <<'PY'
import json, sys, collections
d = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line); d[r["case"]][r["tag"]] = r["ms"]
for c in sorted(d):
    b = d[c]
    if "old" in b and "gpu" in b:
        extra = "  ".join(f"{t} {b['old']/b[t]:.3f}x" for t in ("queue-beside", "serial") if t in b)
        print(f"{c:26s} old {b['old']:8.3f} new {b['gpu']:8.3f} {b['old']/b['gpu']:.3f}x  {extra}")
PY
echo "done $(( $(date +%s) - t0 )) s"

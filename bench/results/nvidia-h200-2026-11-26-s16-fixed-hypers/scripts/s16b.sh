#!/usr/bin/env bash
# Session 16 call b: kFixedHypers (declared int hypers as kernel constants):
# build, CUDA pytest (declared-hyper cases included), throughput A/B with
# HECTOR_FIXED_HYPERS=0/1, instruction counts of the am warp launches,
# memcheck on the fixed-hyper kernels.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/b.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 150 python3 -m pytest tests/python/test_generated.py tests/python/test_deterministic.py tests/python/test_layers.py tests/python/test_nn.py tests/python/test_replay.py -q -x -k "cuda or replay or partial_row or declared" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
grep -E "^FAILED|Error" $R/pytest.log | head -5
for f in 0 1; do
  HECTOR_FIXED_HYPERS=$f timeout 100 python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training --tag fixed$f >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp fixed$f rc=$? $(( $(date +%s) - t0 )) s"
done
python3 - "$R/tp.jsonl" <<'PY'
import json, sys, collections
d = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line); d[r["case"]][r["tag"]] = r["ms"]
for c in sorted(d):
    b = d[c]
    if "fixed0" in b and "fixed1" in b:
        print(f"{c:28s} fixed0 {b['fixed0']:8.3f}  fixed1 {b['fixed1']:8.3f}  {b['fixed0']/b['fixed1']:.3f}x")
PY
M="--metrics gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread"
for f in 0 1; do
  HECTOR_FIXED_HYPERS=$f timeout 70 ncu --clock-control none $M -k regex:forward_trav -c 8 python3 -m hector.bench.profile --datasets am --models rgcn,rgat,hgt --modes inference --steps 1 --warmup 0 --rows 4 > $R/ncu-fixed$f.txt 2>&1
  echo "ncu fixed$f rc=$? $(( $(date +%s) - t0 )) s"
done
S=compute-sanitizer
timeout 100 $S --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared and (rgat_pyg or hgt_pyg or rgcn_pyg) and (plain or split-hubs) and not heavy" > $R/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/memcheck.log | tail -1) $(grep -E 'passed|failed' $R/memcheck.log | tail -1)"
echo "done $(( $(date +%s) - t0 )) s"

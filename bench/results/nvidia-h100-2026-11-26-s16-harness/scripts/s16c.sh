#!/usr/bin/env bash
# Session 16 call c: worker-split contractions (HGT's attention score dot,
# the backward sum_to's) on top of kFixedHypers: build, CUDA pytest,
# memcheck and racecheck on the split kernels, throughput against the
# previous commit (7a5d08b, .devcmd/prev) and fixed-hypers A/B on the
# small graphs.
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
bench/build-variant.sh prev "" .devcmd/prev > $R/build-prev.log 2>&1
echo "build prev rc=$? $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 170 python3 -m pytest tests/python/test_generated.py tests/python/test_deterministic.py tests/python/test_layers.py tests/python/test_nn.py tests/python/test_replay.py -q -k "cuda or replay or partial_row or declared" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
grep -E "^FAILED|Error" $R/pytest.log | head -5
S=compute-sanitizer
for tool in memcheck racecheck; do
  timeout 80 $S --tool $tool --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and (hgt or rgat) and (plain or split-hubs) and not heavy and (interpreter) and not tf32" > $R/$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/$tool.log | tail -1) $(grep -E 'passed|failed' $R/$tool.log | tail -1) $(( $(date +%s) - t0 )) s"
done
for tag in prev head; do
  d=$PWD/build-gpu; [ $tag = prev ] && d=$PWD/build-prev
  HECTOR_BUILD_DIR=$d timeout 80 python3 -m hector.bench.throughput --datasets am,mag,wikikg2,fb15k,mutag --models hgt,rgat --modes inference,training --tag $tag >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $tag rc=$? $(( $(date +%s) - t0 )) s"
done
for f in 0 1; do
  HECTOR_FIXED_HYPERS=$f timeout 40 python3 -m hector.bench.throughput --datasets aifb,mutag,bgs,fb15k --models rgat,rgcn,hgt --modes training --tag fixed$f >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp fixed$f rc=$? $(( $(date +%s) - t0 )) s"
done
python3 - "$R/tp.jsonl" <<'PY'
import json, sys, collections
d = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line); d[r["case"]][r["tag"]] = r["ms"]
for a, b in (("prev", "head"), ("fixed0", "fixed1")):
    for c in sorted(d):
        x = d[c]
        if a in x and b in x:
            print(f"{c:28s} {a} {x[a]:8.3f}  {b} {x[b]:8.3f}  {x[a]/x[b]:.3f}x")
PY
echo "done $(( $(date +%s) - t0 )) s"

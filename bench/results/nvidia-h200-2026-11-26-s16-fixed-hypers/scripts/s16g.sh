#!/usr/bin/env bash
# Session 16 call g (an experiment, not landed): element batches in the
# warp groups now that the fixed instantiation's row sizes are constants.
# Variants of HEAD's pyg libraries with HECTOR_BATCH 1 (default), 4, 8;
# forward throughput of am and mag, 3 models.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/g.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
export PYTHONPATH=$PWD/runtime/python
for b in 1 8 4; do
  VARIANT_JOBS=16 bench/build-variant.sh b$b "-DHECTOR_BATCH=$b" > $R/build-b$b.log 2>&1
  echo "build b$b rc=$? $(( $(date +%s) - t0 )) s"
  HECTOR_BUILD_DIR=$PWD/build-b$b timeout 45 python3 -m hector.bench.throughput --datasets am,mag --models rgcn,rgat,hgt --modes inference --tag b$b >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp b$b rc=$? $(( $(date +%s) - t0 )) s"
done
python3 - "$R/tp.jsonl" <<'PY'
import json, sys, collections
d = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line); d[r["case"]][r["tag"]] = r["ms"]
for c in sorted(d):
    x = d[c]
    print(c, "  ".join(f"{t} {x[t]:.3f}" for t in ("b1", "b4", "b8") if t in x),
          "  ".join(f"b1/{t} {x['b1']/x[t]:.3f}" for t in ("b4", "b8") if t in x and "b1" in x))
PY
echo "done $(( $(date +%s) - t0 )) s"

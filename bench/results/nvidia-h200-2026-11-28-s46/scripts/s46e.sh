#!/usr/bin/env bash
# Session 46, call e: branch s46-nn-host (hector.nn's host path: the
# library called without LayerLibrary.run's dict checks, hypers checked
# once a value, the graph cache looked up before the edge checks, x_dict's
# rows without a copy when they lie in one buffer, and the harness's HGT
# output rows likewise) against main 31f1bdf (.devcmd/main). Only Python
# changed, so one build serves both; each side runs with its own tree's
# Python package. Checks: the CUDA cases of test_nn.py and test_layers.py.
# Speed: the harness (synchronised steps, --tf32) on the 8 datasets,
# `hector` and `hector-cr`, inference, old and new interleaved by model.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start e
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 150 python3 -m pytest -q -k cuda \
  tests/python/test_nn.py tests/python/test_layers.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
for model in rgcn hgt rgat; do
  for side in old new; do
    tree=.; [ $side = old ] && tree=.devcmd/main
    PYTHONPATH="$PWD/$tree/runtime/python" HECTOR_BUILD_DIR="$PWD/build-new" \
      timeout 100 python3 -m hector.bench --tf32 --no-chart --models $model \
      --modes inference --systems hector,hector-cr --out $R/$side-$model \
      > $R/$side-$model.log 2>&1
    echo "$side $model rc=$? $(gpu_elapsed)"
  done
done
python3 - "$R" <<'PY'
import json, sys, os
r = sys.argv[1]
rows = {}
for side in ("old", "new"):
    for model in ("rgcn", "hgt", "rgat"):
        p = f"{r}/{side}-{model}/results.jsonl"
        if not os.path.exists(p):
            continue
        for line in open(p):
            rec = json.loads(line)
            if rec.get("status") != "ok":
                continue
            key = (rec["model"], rec["dataset"], rec["system"])
            rows.setdefault(key, {})[side] = rec["time_ms"]
for (m, d, s), v in sorted(rows.items()):
    if "old" in v and "new" in v:
        print(f"{m:5} {d:8} {s:10} old {v['old']:8.4f} new {v['new']:8.4f}"
              f" ({v['old'] / v['new']:.3f}x)")
PY

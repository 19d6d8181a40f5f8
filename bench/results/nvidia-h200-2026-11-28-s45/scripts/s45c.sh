#!/usr/bin/env bash
# Session 45, call c: is the drift of call b (identical kernels 1.82 to
# 2.04 ms on mag's RGCN step, by when they ran) the GPU's clocks? main
# 8c3ba99; s45c_clocks.py on mag then am with nvidia-smi logging the SM
# and memory clocks, power, temperature and throttle reasons every 100 ms.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
GPU_BUILD_JOBS=16 gpu_build main .
for ds in mag am; do
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
    --format=csv,noheader -lms 100 > $R/smi-$ds.csv 2>&1 &
  SMI=$!
  gpu_with main timeout 120 python3 \
    bench/results/nvidia-h200-2026-11-28-s45/scripts/s45c_clocks.py $ds \
    > $R/clocks-$ds.jsonl 2>$R/clocks-$ds.err
  echo "clocks $ds rc=$? $(gpu_elapsed)"
  kill $SMI
  python3 - $R/clocks-$ds.jsonl $R/smi-$ds.csv <<'PY'
import json, sys, datetime
bursts = [json.loads(l) for l in open(sys.argv[1])]
smi = []
for line in open(sys.argv[2]):
    f = [x.strip() for x in line.split(",")]
    try:
        ts = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
    except ValueError:
        continue
    smi.append((ts, f[1:]))
for b in bursts[::3] + bursts[-1:]:
    near = min(smi, key=lambda s: abs(s[0] - b["unix"])) if smi else (0, [])
    print(b["burst"], b["t"], b["ms"], *near[1])
PY
done
echo "done $(gpu_elapsed)"

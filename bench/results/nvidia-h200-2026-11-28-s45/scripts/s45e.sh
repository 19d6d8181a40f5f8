#!/usr/bin/env bash
# Session 45, call e: main 8c3ba99; mag's RGCN step back to back for 60 s
# (s45e_sustained.py) with nvidia-smi logging clocks, power, temperature
# and throttle reasons every 200 ms: does a sustained load slow the step
# (call b's 1.82 -> 2.03 ms)?
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start e
GPU_BUILD_JOBS=16 gpu_build main .
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
  --format=csv,noheader -lms 200 > $R/smi.csv 2>&1 &
SMI=$!
gpu_with main timeout 150 python3 \
  bench/results/nvidia-h200-2026-11-28-s45/scripts/s45e_sustained.py mag 60 \
  > $R/sustained.jsonl 2>$R/sustained.err
echo "sustained rc=$? $(gpu_elapsed)"
kill $SMI
python3 - $R/sustained.jsonl $R/smi.csv <<'PY'
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
step = max(1, len(bursts) // 30)
for b in bursts[::step] + bursts[-1:]:
    near = min(smi, key=lambda s: abs(s[0] - b["unix"])) if smi else (0, [])
    print(b["burst"], b["t"], b["ms"], *near[1])
PY
cut -d, -f2,6 $R/smi.csv | sort | uniq -c | sort -rn | head -8
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 45, call b: main 8c3ba99 with the bench variants; s45b_probe.py
# on RGCN inference (am, mag; hector, hector-cr, hector-c), then issue
# 9's harness on the same cases (the three systems, twice, in two
# orders), to see where the harness's step adds to the kernels and why
# identical kernels timed 12% apart in session 43's run.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build main .
mkdir -p $R/traces
gpu_with main timeout 200 python3 \
  bench/results/nvidia-h200-2026-11-28-s45/scripts/s45b_probe.py \
  am,mag hector,hector-cr,hector-c $R/traces 2>$R/probe.err | tee $R/probe.jsonl
echo "probe rc=$? $(gpu_elapsed)"
for order in hector,hector-cr,hector-c hector-c,hector-cr,hector; do
  gpu_with main timeout 100 python3 -m hector.bench --datasets am,mag \
    --models rgcn --modes inference --systems $order --tf32 --no-chart \
    --out $R/harness-${order%%,*} > $R/harness-${order%%,*}.log 2>&1
  echo "harness $order rc=$? $(gpu_elapsed)"
  python3 -c "
import json, statistics, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    t = r.get('times_ms') or []
    print(r['dataset'], r['system'], r.get('status', 'ok'),
          round(statistics.median(t), 4) if t else '-',
          [round(x, 3) for x in t])" $R/harness-${order%%,*}/results.jsonl
done
gzip -f $R/traces/*.json
echo "done $(gpu_elapsed)"

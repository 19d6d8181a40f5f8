#!/usr/bin/env bash
# Session 45, call f: main d56ed6c (hector.bench.gpu_state): a direct
# sample on the GPU, then the harness on am and mag's RGCN inference
# (pyg-rgcn, hector, hector-cr, --tf32), printing each record's median
# and the gpu_state it recorded.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start f
GPU_BUILD_JOBS=16 gpu_build main .
gpu_with main python3 -c "
import torch, json
from hector.bench import gpu_state
print(json.dumps(gpu_state.sample(torch.device('cuda'))))"
gpu_with main timeout 60 python3 -m pytest -q tests/python/test_bench_gpu_state.py \
  2>&1 | tail -1
gpu_with main timeout 200 python3 -m hector.bench --datasets am,mag \
  --models rgcn --modes inference --systems pyg-rgcn,hector,hector-cr \
  --tf32 --no-chart --out $R/harness > $R/harness.log 2>&1
echo "harness rc=$? $(gpu_elapsed)"
grep -E "MHz|ms " $R/harness.log | head -12
python3 -c "
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(r['dataset'], r['system'], r['status'], r.get('time_ms'),
          json.dumps(r.get('gpu_state')))" $R/harness/results.jsonl
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 45, call g: does mag's RGCN step run slower after am's cases in
# the same process? main d56ed6c on one lease: mag's step back to back in
# a fresh process (s45c_clocks.py), the harness on mag alone, on am then
# mag (pyg-rgcn and hector), on am then mag (hector alone), and the fresh
# back-to-back process again.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start g
GPU_BUILD_JOBS=16 gpu_build main .
S=bench/results/nvidia-h200-2026-11-28-s45/scripts
fresh() {
  gpu_with main timeout 60 python3 $S/s45c_clocks.py mag > $R/fresh-$1.jsonl 2>&1
  python3 -c "
import json, statistics, sys
ms = [json.loads(l)['ms'] for l in open(sys.argv[1]) if l.startswith('{')]
print('fresh $1: mag back to back, median of', len(ms), 'bursts', statistics.median(ms))" $R/fresh-$1.jsonl
}
harness() {
  local name="$1" ds="$2" systems="$3"
  gpu_with main timeout 120 python3 -m hector.bench --datasets $ds \
    --models rgcn --modes inference --systems $systems --tf32 --no-chart \
    --out $R/$name > $R/$name.log 2>&1
  echo "harness $name rc=$? $(gpu_elapsed)"
  grep -E "^\[ " $R/$name.log
}
fresh 1
harness mag-alone mag pyg-rgcn,hector
harness am-then-mag am,mag pyg-rgcn,hector
harness am-then-mag-hector am,mag hector
fresh 2
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 36 call b: is Hector's small-graph training step slower inside
# issue 9's harness than alone? Call a's host_split had aifb's RGAT step
# at 0.469 ms where session 35's harness runs had 0.837 (call g) with
# the same code. The harness on aifb and mutag RGAT training, `hector`
# alone in a process and after pyg-rgat-compile in the same process, each
# twice, interleaved; then op_host.py's host times of the step's parts.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
GPU_BUILD_JOBS=16 gpu_build new .
bench() {  # bench NAME SYSTEMS
  gpu_with new timeout 120 python3 -m hector.bench --tf32 --systems "$2" \
    --models rgat --modes training --datasets aifb,mutag --no-chart \
    --out "$R/$1" > "$R/$1.log" 2>&1
  echo "$1 rc=$? $(gpu_elapsed)"
  python3 - "$R/$1/results.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("time_ms"):
        print(f"  {r['dataset']:6s} {r['system']:18s} {r['time_ms']:.3f} ms "
              f"({min(r['times_ms']):.3f} to {max(r['times_ms']):.3f})")
PY
}
bench alone1 hector
bench after1 pyg-rgat-compile,hector
bench alone2 hector
bench after2 pyg-rgat-compile,hector
gpu_with new timeout 120 python3 \
  bench/results/nvidia-h100-2026-11-28-s36/scripts/op_host.py aifb mutag \
  2>&1 | grep -v Warning
echo "done $(gpu_elapsed)"

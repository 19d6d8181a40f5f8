#!/usr/bin/env bash
# Session 22, calls a to c: the baseline systems with --tf32 on the 8
# datasets, continued from call to call with --skip-done (earlier calls'
# results.jsonl travel in .devcmd/s22done/). pyg-rgcn-compile (1.7x to 17x
# slower than segmm-rgcn in every earlier case) and pyg-fastrgcn-compile
# (fails under Inductor everywhere) are left out; see the results README.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
name="$1" limit="$2"
gpu_session_start "$name"
done_list=$(ls .devcmd/s22done/*.jsonl 2>/dev/null | paste -sd, -)
skip=()
[ -n "$done_list" ] && skip=(--skip-done "$done_list")
echo "skip: $done_list"
PYTHONPATH=$PWD/runtime/python timeout "$limit" python3 -m hector.bench --tf32 \
  --systems pyg-rgcn,pyg-fastrgcn,segmm-rgcn,pyg-rgat,pyg-rgat-compile,pyg-hgt,pyg-hgt-compile \
  --models rgcn,rgat,hgt --case-timeout 10 --no-chart "${skip[@]}" \
  --out "$R/base" > "$R/base.progress.log" 2>&1
echo "baselines rc=$? $(grep -c '^\[' $R/base.progress.log) records $(gpu_elapsed)"
grep '^\[\|^--' "$R/base.progress.log" | tail -4

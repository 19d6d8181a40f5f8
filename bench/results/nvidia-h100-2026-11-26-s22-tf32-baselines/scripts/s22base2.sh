#!/usr/bin/env bash
# Session 22, call d on: the baselines with --tf32 continued, the cheap
# systems first on every remaining dataset, then pyg-hgt-compile, each
# compilation capped by --prepare-timeout.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
name="$1" limit_cheap="$2" limit_compile="$3" datasets="$4"
gpu_session_start "$name"
run_systems() {
  local tag="$1" limit="$2" systems="$3"
  local done_list
  done_list=$(ls .devcmd/s22done/*.jsonl .devcmd/s22done/*.progress.log 2>/dev/null | paste -sd, -)
  PYTHONPATH=$PWD/runtime/python timeout "$limit" python3 -m hector.bench \
    --tf32 --systems "$systems" --datasets "$datasets" \
    --models rgcn,rgat,hgt --case-timeout 10 --prepare-timeout 200 \
    --no-chart --skip-done "$done_list" \
    --out "$R/$tag" > "$R/$tag.progress.log" 2>&1
  echo "$tag rc=$? $(grep -c '^\[' "$R/$tag.progress.log") records $(gpu_elapsed)"
  grep '^\[' "$R/$tag.progress.log" | cut -c1-110
  cp "$R/$tag/results.jsonl" ".devcmd/s22done/$name-$tag.jsonl" 2>/dev/null
}
[ "$limit_cheap" -gt 0 ] && run_systems cheap "$limit_cheap" pyg-rgcn,pyg-fastrgcn,segmm-rgcn,pyg-rgat,pyg-rgat-compile,pyg-hgt
run_systems hgtc "$limit_compile" pyg-hgt-compile

#!/usr/bin/env bash
# Session 34 call d: where HGT's and RGAT's forward floors stand on main
# after calls a to c: hector.bench on am, mag and wikikg2 for HGT and
# RGAT inference and training (the PyG references, the hector drop-in and
# hector-cr), --tf32. Not issue 9's whole run: the floor column only.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 300 python3 -m hector.bench --tf32 \
  --systems pyg-rgat,pyg-hgt,hector,hector-cr --models rgat,hgt \
  --datasets am,mag,wikikg2 --case-timeout 20 --prepare-timeout 200 \
  --no-chart --out $R/harness > $R/harness.log 2>&1
echo "harness rc=$? $(grep -c '^\[' $R/harness.log) records $(gpu_elapsed)"
grep -E "^\| (am|mag|wikikg2) |^## " $R/harness/table.md | cut -c1-160
echo "done $(gpu_elapsed)"

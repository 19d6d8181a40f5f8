#!/usr/bin/env bash
# Session 35 call d, on call c's machine and build (gated-mix f11ffa2 with
# the bench variants, merged into main as is): issue 9's run, every Hector
# system and every baseline but pyg-hgt-compile, --tf32, all 8 datasets
# (merged later with session 22's pyg-hgt-compile records).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
gpu_issue9_run new 420
echo "done $(gpu_elapsed)"

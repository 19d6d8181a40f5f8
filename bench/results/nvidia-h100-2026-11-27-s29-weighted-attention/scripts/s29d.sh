#!/usr/bin/env bash
# Session 29 call d: RGAT inference on all eight datasets, main before the
# session (.devcmd/old) against this tree (call c's), two interleaved
# rounds of hector.bench for hector-cr and hector: whether the inference
# program costs the small graphs anything (more launches, fb15k's many
# relations).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
[ -x build-old/lib/libhector_rgat_pyg.so ] || { GPU_BUILD_JOBS=6 gpu_build old .devcmd/old & }
[ -x build-new/lib/libhector_rgat_pyg.so ] || GPU_BUILD_JOBS=10 gpu_build new .
wait
for tag in old new old new; do
  gpu_with $tag timeout 200 python3 -m hector.bench --tf32 --models rgat --modes inference --systems hector-cr,hector --out $R/bench-$tag --no-chart > $R/bench-$tag.log 2>&1
  echo "bench $tag rc=$? $(gpu_elapsed)"; grep -E "^\[" $R/bench-$tag.log | sed "s/^/$tag /" | cut -c1-90
done
echo "done $(gpu_elapsed)"

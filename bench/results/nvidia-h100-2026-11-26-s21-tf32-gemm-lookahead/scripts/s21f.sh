#!/usr/bin/env bash
# Session 21 call f: where a forward step's time goes with TF32 (the
# final run's setting): kernel profiles of the three models' inference on
# am, mag and wikikg2; ncu of am's GEMMs and traversals (RGCN, RGAT).
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start f
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 150 python3 -m hector.bench.profile --tf32 --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference --out $R/prof > $R/prof.log 2>&1
echo "profile rc=$? $(gpu_elapsed)"
M="--section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats"
gpu_with new timeout 120 ncu --clock-control none $M -k regex:"forward_trav|Mma" python3 -m hector.bench.profile --tf32 --datasets am --models rgcn,rgat --modes inference --steps 1 --warmup 0 --rows 4 > $R/ncu-am-tf32.txt 2>&1
echo "ncu rc=$? $(gpu_elapsed)"
echo "done $(gpu_elapsed)"

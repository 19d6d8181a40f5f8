#!/usr/bin/env bash
# Session 21 call a: the final tree of session 20 (1a6e3ee) on the GPU:
# CUDA pytest, racecheck and memcheck, the harness with and without
# --tf32, ncu of the forward traversals on am.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 150 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
for m in rgat_pyg hgt_pyg; do
  gpu_with new timeout 70 compute-sanitizer --tool racecheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared and $m" > $R/san-racecheck-$m.log 2>&1
  echo "racecheck $m rc=$? $(tail -1 $R/san-racecheck-$m.log) $(gpu_elapsed)"
done
gpu_with new timeout 90 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared" > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(tail -1 $R/san-memcheck.log) $(gpu_elapsed)"
gpu_with new timeout 120 python3 -m hector.bench --systems hector,hector-cr --models rgat,rgcn,hgt --case-timeout 20 --no-chart --out $R/harness > $R/harness.log 2>&1
echo "harness rc=$? $(gpu_elapsed)"
gpu_with new timeout 120 python3 -m hector.bench --tf32 --systems hector,hector-cr --models rgat,rgcn,hgt --case-timeout 20 --no-chart --out $R/harness-tf32 > $R/harness-tf32.log 2>&1
echo "harness tf32 rc=$? $(gpu_elapsed)"
M="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats"
gpu_with new timeout 100 ncu --clock-control none $M -k regex:"forward_trav|Mma" python3 -m hector.bench.profile --datasets am --models rgcn,rgat --modes inference --steps 1 --warmup 0 --rows 4 > $R/ncu-am.txt 2>&1
echo "ncu rc=$? $(gpu_elapsed)"
echo "done $(gpu_elapsed)"

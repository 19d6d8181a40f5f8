#!/usr/bin/env bash
# Session 20 call j: node-row warp launches in groups of 16 lanes on
# graphs with few edges per row (branch node-lanes) against main
# (5797f9c, its own Python package): GroupSum template tests (folds and
# row queue within groups), CUDA pytest, racecheck and memcheck on the
# forced 16-lane tests, throughput A/B of the three models.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start j
GPU_BUILD_JOBS=10 gpu_build new . tests &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old2 &
wait
./build-new/bin/templates_tests --gtest_filter='GroupSum.*:FoldLanes*' > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ')"
gpu_with new timeout 120 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_with new timeout 60 compute-sanitizer --tool racecheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and node_row_groups and 16 and declared and (rgat_pyg or hgt_pyg or rgcn_pyg) and not split" > $R/san-racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY' $R/san-racecheck.log | sort | uniq -c | tr '\n' ' ') $(tail -1 $R/san-racecheck.log)"
gpu_with new timeout 50 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and node_row_groups and 16 and plain" > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(tail -1 $R/san-memcheck.log) $(gpu_elapsed)"
GPU_TP_TIMEOUT=90 gpu_throughput_ab old new 1 --datasets aifb,mutag,bgs,biokg,am,fb15k,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training > $R/ab1.txt
GPU_TP_TIMEOUT=60 gpu_throughput_ab old new 1 --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training
echo "done $(gpu_elapsed)"

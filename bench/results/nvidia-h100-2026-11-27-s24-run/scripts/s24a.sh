#!/usr/bin/env bash
# (Prepared in session 23 for the next session.) Branch accumulate-partials
# (new, checked out, with tests) against main (old: `git archive main | tar
# -x -C .devcmd/old` first; session 23 left main at a2e9bb7 there): templates_tests, CUDA pytest, memcheck on the
# declared-hyper tests of rgcn_pyg and rgat_pyg, and the --tf32 throughput
# A/B on the 8 datasets, RGCN and RGAT training, two rounds.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=12 gpu_build new . tests &
GPU_BUILD_JOBS=4 gpu_build old .devcmd/old &
wait
./build-new/bin/templates_tests > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
gpu_with new timeout 150 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_with new timeout 90 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared and (rgcn_pyg or rgat_pyg or rgcn)" > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(tail -1 $R/san-memcheck.log) $(gpu_elapsed)"
# main's own kernels (2f715cb's launch bounds) under CUDA pytest and
# memcheck too: session 23 ran them only through the harness.
gpu_with old timeout 150 python3 -m pytest tests/python -q -x -k cuda > $R/pytest-old.log 2>&1
echo "pytest old rc=$? $(tail -1 $R/pytest-old.log) $(gpu_elapsed)"
gpu_with old timeout 90 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared and (rgat_pyg or hgt_pyg)" > $R/san-memcheck-old.log 2>&1
echo "memcheck old rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-old.log | tail -1) $(gpu_elapsed)"
GPU_TP_TIMEOUT=150 gpu_throughput_ab old new 2 --tf32 --datasets aifb,mutag,bgs,biokg,am,fb15k,mag,wikikg2 --models rgcn,rgat --modes training > $R/ab.txt
tail -20 $R/ab.txt
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 26 call g: the deterministic path for sorted segments, third form
# (a block per share of whole runs; each warp stages and computes one row
# of a batch, then the block adds the batch in row order): templates_tests' CUDA cases (the new bitwise comparison with
# the ordered kernel among them), memcheck and racecheck on the new cases,
# CUDA pytest's deterministic and RGCN cases, and RGCN inference's
# throughput in deterministic mode on am, mag and wikikg2 (call e's old
# numbers are from another machine).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start g
GPU_BUILD_JOBS=16 gpu_build new . tests
./build-new/bin/templates_tests --gtest_filter='*Cuda*:*OrderedRuns*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED" $R/templates.log | head -5
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='*Cuda*ummedRowsMeanDeterministic*:*Cuda*orderedRuns*:*OrderedRuns*' > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(gpu_elapsed)"
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='*Cuda*ummedRowsMeanDeterministicRuns*:*Cuda*orderedRuns*:*OrderedRuns*' > $R/san-racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $R/san-racecheck.log | tail -1) $(gpu_elapsed)"
gpu_with new timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python/test_deterministic.py tests/python/test_generated.py -k "cuda and (rgcn or deterministic)" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_with new timeout 150 python3 bench/results/nvidia-h100-2026-11-27-s26-segment-sums/scripts/det_tp.py --tf32 --datasets am,mag,wikikg2 --models rgcn --modes inference --steps 5 --warmup 2 --tag new-deterministic > $R/det.jsonl 2> $R/det.err
echo "deterministic rc=$? $(gpu_elapsed)"
cat $R/det.jsonl
echo "done $(gpu_elapsed)"

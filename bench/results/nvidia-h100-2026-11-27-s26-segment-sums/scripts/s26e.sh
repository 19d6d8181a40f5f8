#!/usr/bin/env bash
# Session 26 call e: the GEMM template's deterministic path for rows sorted
# by output row within each segment (one launch per segment, a thread per
# run of rows and column; the summed RGCN messages' chunks), against
# e24c0f6: templates_tests' CUDA cases, memcheck on the new cases, CUDA
# pytest's deterministic and RGCN cases, and RGCN inference's throughput
# in deterministic mode on am and mag (old: compact messages and a
# segmented traversal; new: the summed GEMM's deterministic path).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start e
GPU_BUILD_JOBS=11 gpu_build new . tests &
GPU_BUILD_JOBS=5 gpu_build old .devcmd/old &
wait
./build-new/bin/templates_tests --gtest_filter='*Cuda*:*OrderedRuns*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='*Cuda*ummedRowsMeanDeterministic*:*Cuda*orderedRuns*:*OrderedRuns*' > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(gpu_elapsed)"
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='*Cuda*ummedRowsMeanDeterministicRuns*:*Cuda*orderedRuns*' > $R/san-racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $R/san-racecheck.log | tail -1) $(gpu_elapsed)"
gpu_with new timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python/test_deterministic.py tests/python/test_generated.py -k "cuda and (rgcn or deterministic)" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
for tag in old new; do
  gpu_with $tag timeout 120 python3 bench/results/nvidia-h100-2026-11-27-s26-segment-sums/scripts/det_tp.py --tf32 --datasets am,mag --models rgcn --modes inference --steps 5 --warmup 2 --tag $tag-deterministic >> $R/det.jsonl 2>> $R/det.err
  echo "deterministic $tag rc=$? $(gpu_elapsed)"
done
cat $R/det.jsonl
echo "done $(gpu_elapsed)"

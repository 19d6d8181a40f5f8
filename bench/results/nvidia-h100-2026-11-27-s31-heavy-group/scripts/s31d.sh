#!/usr/bin/env bash
# Session 31 call d: branch gemm-stages (the linear tensor-core kernel's
# copied rows in a pipeline of kStages tiles; HECTOR_GEMM_STAGES=3 keeps
# two tiles' copies in flight a block, the default 2 is the old schedule).
# One build with tests: templates_tests' CUDA cases with 2 and 3 stages;
# the whole CUDA pytest with 3; memcheck on templates_tests' CUDA cases and
# on the generated RGCN and HGT fp32 CUDA cases with 3; throughput of RGCN,
# RGAT and HGT on am, mag, wikikg2 and biokg, 2 stages against 3, two
# interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
GPU_BUILD_JOBS=16 gpu_build new . tests || exit 1
for stages in 2 3; do
  HECTOR_GEMM_STAGES=$stages ./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates-s$stages.log 2>&1
  echo "templates stages $stages rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates-s$stages.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
  grep -E "^\[  FAILED" $R/templates-s$stages.log | head
done
HECTOR_GEMM_STAGES=3 gpu_with new timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python -k cuda > $R/pytest-s3.log 2>&1
echo "pytest stages 3 rc=$? $(tail -1 $R/pytest-s3.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest-s3.log | head -20
HECTOR_GEMM_STAGES=3 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='SegmentGemmCuda*' > $R/san-memcheck-templates-s3.log 2>&1
echo "memcheck templates stages 3 rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-templates-s3.log | tail -1) $(gpu_elapsed)"
HECTOR_GEMM_STAGES=3 gpu_with new timeout 100 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and (rgcn or hgt) and float32" > $R/san-memcheck-generated-s3.log 2>&1
echo "memcheck generated stages 3 rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-generated-s3.log | tail -1) $(tail -1 $R/san-memcheck-generated-s3.log) $(gpu_elapsed)"
TP="--tf32 --datasets am,mag,wikikg2,biokg --models rgcn,rgat,hgt --modes inference,training"
for round in 1 2; do
  for stages in 2 3; do
    [ $(($(date +%s) - GPU_T0)) -gt 500 ] && { echo "skip throughput $stages $(gpu_elapsed)"; continue; }
    HECTOR_GEMM_STAGES=$stages gpu_with new timeout 75 python3 -m hector.bench.throughput $TP --tag s$stages >> $R/tp.jsonl 2>> $R/tp.err
    echo "throughput stages $stages round $round rc=$? $(gpu_elapsed)"
  done
done
gpu_with new python3 -m hector.bench.compare $R/tp.jsonl --baseline s2 > $R/ab.txt 2>&1
cat $R/ab.txt
echo "done $(gpu_elapsed)"

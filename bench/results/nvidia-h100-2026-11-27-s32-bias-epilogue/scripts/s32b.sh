#!/usr/bin/env bash
# Session 32 call b: branch bias-epilogue (the linear tensor-core kernel's
# bias pairs loaded before its stores; a staged epilogue that stores
# 16-byte quads, or adds them atomically, from the warp's own X rows,
# HECTOR_GEMM_STAGED_OUTPUT=0 keeps the pair stores) against main
# (.devcmd/old). templates_tests' CUDA cases with the staged output on and
# off; bench_segment_gemm at am's node count, on and off; the whole CUDA
# pytest; memcheck on templates_tests' SegmentGemmCuda cases and the
# generated RGCN fp32 CUDA cases; throughput of RGCN, RGAT and HGT on am,
# mag, wikikg2 and biokg: old, new, then new with the staged output off.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
GPU_BUILD_JOBS=5 gpu_build old .devcmd/old &
GPU_BUILD_JOBS=11 gpu_build new . tests
wait
for so in 1 0; do
  HECTOR_GEMM_STAGED_OUTPUT=$so ./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates-so$so.log 2>&1
  echo "templates staged $so rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates-so$so.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
  grep -E "^\[  FAILED" $R/templates-so$so.log | head
  HECTOR_GEMM_STAGED_OUTPUT=$so timeout 60 ./build-new/bin/bench_segment_gemm 1890000 > $R/probe-so$so.log 2>&1
  echo "probe staged $so rc=$?"; grep -E "tf32|linear  template|rowIds" $R/probe-so$so.log
done
gpu_with new timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -20
timeout 80 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='SegmentGemmCuda*' > $R/san-memcheck-templates.log 2>&1
echo "memcheck templates rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-templates.log | tail -1) $(gpu_elapsed)"
gpu_with new timeout 80 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and rgcn and float32" > $R/san-memcheck-generated.log 2>&1
echo "memcheck generated rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-generated.log | tail -1) $(tail -1 $R/san-memcheck-generated.log) $(gpu_elapsed)"
TP="--tf32 --datasets am,mag,wikikg2,biokg --models rgcn,rgat,hgt --modes inference,training"
for round in 1 2; do
  for tag in old new new0; do
    [ $(($(date +%s) - GPU_T0)) -gt 530 ] && { echo "skip throughput $tag $(gpu_elapsed)"; continue; }
    b=$tag; so=1; [ $tag = new0 ] && { b=new; so=0; }
    HECTOR_GEMM_STAGED_OUTPUT=$so gpu_with $b timeout 60 python3 -m hector.bench.throughput $TP --tag $tag >> $R/tp.jsonl 2>> $R/tp.err
    echo "throughput $tag round $round rc=$? $(gpu_elapsed)"
  done
done
gpu_with new python3 -m hector.bench.compare $R/tp.jsonl --baseline old > $R/ab.txt 2>&1
cat $R/ab.txt
echo "done $(gpu_elapsed)"

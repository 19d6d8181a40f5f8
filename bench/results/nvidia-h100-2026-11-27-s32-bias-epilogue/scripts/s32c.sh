#!/usr/bin/env bash
# Session 32 call c: branch bias-epilogue as it will merge (the fused
# linear kernel loads every mma tile's bias pair before its stores; the
# staged epilogue of call b taken out) against main (.devcmd/old, b4d02e1).
# templates_tests' SegmentGemmCuda cases; bench_segment_gemm at am's node
# count; the whole CUDA pytest; memcheck on the SegmentGemmCuda cases and
# the generated HGT fp32 CUDA cases (biased projections); two interleaved
# rounds of throughput of RGCN, RGAT and HGT on am, mag, wikikg2 and
# biokg, old against new.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
GPU_BUILD_JOBS=5 gpu_build old .devcmd/old &
GPU_BUILD_JOBS=11 gpu_build new . tests
wait
./build-new/bin/templates_tests --gtest_filter='SegmentGemmCuda*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED" $R/templates.log | head
timeout 60 ./build-new/bin/bench_segment_gemm 1890000 > $R/probe.log 2>&1
echo "probe rc=$?"; grep -E "tf32" $R/probe.log
gpu_with new timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -20
timeout 80 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='SegmentGemmCuda*' > $R/san-memcheck-templates.log 2>&1
echo "memcheck templates rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-templates.log | tail -1) $(gpu_elapsed)"
gpu_with new timeout 80 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and hgt and float32" > $R/san-memcheck-generated.log 2>&1
echo "memcheck generated rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-generated.log | tail -1) $(tail -1 $R/san-memcheck-generated.log) $(gpu_elapsed)"
TP="--tf32 --datasets am,mag,wikikg2,biokg --models rgcn,rgat,hgt --modes inference,training"
for round in 1 2; do
  for tag in old new; do
    [ $(($(date +%s) - GPU_T0)) -gt 530 ] && { echo "skip throughput $tag $(gpu_elapsed)"; continue; }
    gpu_with $tag timeout 60 python3 -m hector.bench.throughput $TP --tag $tag >> $R/tp.jsonl 2>> $R/tp.err
    echo "throughput $tag round $round rc=$? $(gpu_elapsed)"
  done
done
gpu_with new python3 -m hector.bench.compare $R/tp.jsonl --baseline old > $R/ab.txt 2>&1
cat $R/ab.txt
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 32 call f: branch sum-one-buffer as it would merge (unweighted
# summed rows: one X buffer, five blocks a multiprocessor, kAhead 3;
# weighted summed rows as on main) against main (.devcmd/old, 7dd5389).
# The whole CUDA pytest; memcheck on the generated RGCN fp32 CUDA cases;
# throughput of RGCN and RGAT on am, mag, wikikg2 and biokg, two
# interleaved rounds; templates_tests' CUDA cases if time is left.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start f
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
GPU_BUILD_JOBS=10 gpu_build new . tests
wait
gpu_with new timeout 120 python3 -m pytest -q -p no:cacheprovider tests/python -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -20
gpu_with new timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and rgcn and float32" > $R/san-memcheck-generated.log 2>&1
echo "memcheck generated rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-generated.log | tail -1) $(tail -1 $R/san-memcheck-generated.log) $(gpu_elapsed)"
TP="--tf32 --datasets am,mag,wikikg2,biokg --models rgcn,rgat --modes inference,training"
for round in 1 2; do
  for tag in old new; do
    [ $(($(date +%s) - GPU_T0)) -gt 450 ] && { echo "skip throughput $tag $(gpu_elapsed)"; continue; }
    gpu_with $tag timeout 50 python3 -m hector.bench.throughput $TP --tag $tag >> $R/tp.jsonl 2>> $R/tp.err
    echo "throughput $tag round $round rc=$? $(gpu_elapsed)"
  done
done
gpu_with new python3 -m hector.bench.compare $R/tp.jsonl --baseline old > $R/ab.txt 2>&1
cat $R/ab.txt
[ $(($(date +%s) - GPU_T0)) -lt 400 ] && {
  timeout 120 ./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates.log 2>&1
  echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
}
echo "done $(gpu_elapsed)"

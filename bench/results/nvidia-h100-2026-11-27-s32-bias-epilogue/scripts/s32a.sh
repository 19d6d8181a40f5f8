#!/usr/bin/env bash
# Session 32 call a: branch s32-combo (cpu-fixed-hypers and
# sink-node-stmts merged on main a7cac30) against main (.devcmd/old).
# templates_tests' CUDA cases; the whole CUDA pytest (also covers main's
# shared dst-numbering CSR arrays, 2e73298, not yet run on a GPU);
# memcheck and initcheck on the generated HGT fp32 CUDA cases (the sunk
# statements); bench_segment_gemm's cuBLAS probe of the root GEMM at am's
# and mag's node counts; two interleaved rounds of HGT and RGAT throughput
# on am, mag, wikikg2 and biokg, old against new.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=5 gpu_build old .devcmd/old &
GPU_BUILD_JOBS=11 gpu_build new . tests
wait
./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
for m in 1890000 1940000; do
  timeout 60 ./build-new/bin/bench_segment_gemm $m > $R/probe-$m.log 2>&1
  echo "probe $m rc=$?"; grep -E "device|tf32|linear  template" $R/probe-$m.log
done
gpu_with new timeout 170 python3 -m pytest -q -p no:cacheprovider tests/python -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -20
gpu_with new timeout 90 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and hgt and float32" > $R/san-memcheck-generated.log 2>&1
echo "memcheck generated rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-generated.log | tail -1) $(tail -1 $R/san-memcheck-generated.log) $(gpu_elapsed)"
gpu_with new timeout 70 compute-sanitizer --tool initcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and hgt and float32" > $R/san-initcheck.log 2>&1
echo "initcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-initcheck.log | tail -1) $(tail -1 $R/san-initcheck.log) $(gpu_elapsed)"
TP="--tf32 --datasets am,mag,wikikg2,biokg --models rgat,hgt --modes inference,training"
for round in 1 2; do
  for tag in old new; do
    [ $(($(date +%s) - GPU_T0)) -gt 520 ] && { echo "skip throughput $tag $(gpu_elapsed)"; continue; }
    gpu_with $tag timeout 60 python3 -m hector.bench.throughput $TP --tag $tag >> $R/tp.jsonl 2>> $R/tp.err
    echo "throughput $tag round $round rc=$? $(gpu_elapsed)"
  done
done
gpu_with new python3 -m hector.bench.compare $R/tp.jsonl --baseline old > $R/ab.txt 2>&1
cat $R/ab.txt
echo "done $(gpu_elapsed)"

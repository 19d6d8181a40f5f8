#!/usr/bin/env bash
# Session 32 call e: branch sum-one-buffer. Summed rows stage into one X
# buffer after the epilogue (b4, .devcmd/b4 = 0ac6954: still four blocks a
# multiprocessor), and with it five blocks at 96 registers and kAhead 3
# (weighted 2) (new, this tree), against main (.devcmd/old). The generated
# RGCN and RGAT fp32 CUDA cases for b4 and new; templates_tests' CUDA cases
# for new; throughput of RGCN and RGAT on am, mag, wikikg2 and biokg, two
# interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start e
GPU_BUILD_JOBS=5 gpu_build old .devcmd/old &
GPU_BUILD_JOBS=5 gpu_build b4 .devcmd/b4 &
GPU_BUILD_JOBS=6 gpu_build new . tests
wait
for tag in b4 new; do
  gpu_with $tag timeout 80 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and (rgcn or rgat) and float32" > $R/pytest-$tag.log 2>&1
  echo "pytest $tag rc=$? $(tail -1 $R/pytest-$tag.log) $(gpu_elapsed)"
done
TP="--tf32 --datasets am,mag,wikikg2,biokg --models rgcn,rgat --modes inference,training"
for round in 1 2; do
  for tag in old b4 new; do
    [ $(($(date +%s) - GPU_T0)) -gt 540 ] && { echo "skip throughput $tag $(gpu_elapsed)"; continue; }
    gpu_with $tag timeout 50 python3 -m hector.bench.throughput $TP --tag $tag >> $R/tp.jsonl 2>> $R/tp.err
    echo "throughput $tag round $round rc=$? $(gpu_elapsed)"
  done
done
gpu_with new python3 -m hector.bench.compare $R/tp.jsonl --baseline old > $R/ab.txt 2>&1
cat $R/ab.txt
[ $(($(date +%s) - GPU_T0)) -lt 470 ] && {
  ./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates.log 2>&1
  echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
}
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 27 call e: the deterministic path with a workspace (rows' values
# computed by the ordinary kernels, sorted by output row, added in row
# order): templates_tests' CUDA cases, CUDA pytest's deterministic and
# replay-deterministic cases, memcheck and initcheck on the deterministic
# template cases, and deterministic RGCN inference (am, mag, wikikg2) and
# training (am) timed.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start e
GPU_BUILD_JOBS=16 gpu_build new . tests
./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED" $R/templates.log | head
gpu_with new timeout 100 python3 -m pytest -q -p no:cacheprovider tests/python/test_deterministic.py -k cuda > $R/pytest.log 2>&1
echo "pytest deterministic rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_with new timeout 100 python3 -m pytest -q -p no:cacheprovider tests/python/test_replay.py -k deterministic > $R/pytest-replay.log 2>&1
echo "pytest replay rc=$? $(tail -1 $R/pytest-replay.log) $(gpu_elapsed)"
for tool in memcheck initcheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/*eterministic*:Table/SegmentGemm.DeterministicInPlaceCuda/summedRowsMean*' > $R/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY' $R/san-$tool.log | tail -1) $(gpu_elapsed)"
done
gpu_with new timeout 100 python3 $(dirname "$0")/det_tp.py --tf32 --datasets am,mag,wikikg2 --models rgcn --modes inference --steps 5 --warmup 2 --tag new-deterministic >> $R/det.jsonl 2>> $R/det.err
echo "deterministic inference rc=$? $(gpu_elapsed)"
gpu_with new timeout 60 python3 $(dirname "$0")/det_tp.py --tf32 --datasets am --models rgcn --modes training --steps 3 --warmup 1 --tag new-deterministic >> $R/det.jsonl 2>> $R/det.err
echo "deterministic training rc=$? $(gpu_elapsed)"
cat $R/det.jsonl | cut -c1-200
echo "done $(gpu_elapsed)"

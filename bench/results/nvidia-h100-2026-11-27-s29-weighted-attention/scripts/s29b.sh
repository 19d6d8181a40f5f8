#!/usr/bin/env bash
# Session 29 call b: where RGAT's inference program spends its time
# (call a measured it slower than the training forward it replaced):
# hector.bench.profile of hector-cr's rgat inference on am and mag; memcheck
# and initcheck on the inference cases of test_generated (call a's -k
# matched none).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
GPU_BUILD_JOBS=16 gpu_build new .
for tool in memcheck initcheck; do
  gpu_with new timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and without_grad and rgat and float32" > $R/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY' $R/san-$tool.log | tail -1) $(tail -1 $R/san-$tool.log) $(gpu_elapsed)"
done
gpu_with new timeout 200 python3 -m hector.bench.profile --tf32 --datasets am,mag --models rgat --modes inference --systems hector-cr --rows 14 --out $R/profile > $R/profile.log 2>&1
echo "profile rc=$? $(gpu_elapsed)"; cat $R/profile.log | cut -c1-160
echo "done $(gpu_elapsed)"

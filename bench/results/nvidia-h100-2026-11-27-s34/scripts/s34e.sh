#!/usr/bin/env bash
# Session 34 call e: branch kside (HGT-PyG's inference: q[dst] k_rel^T
# once a (destination, relation) chunk instead of k[src] k_rel once a
# pair) against main 6e07d82 (.devcmd/old). The generated HGT CUDA cases (pytest)
# and memcheck on the HGT-PyG fp32 ones; then a throughput A/B of HGT
# inference on am, mag and wikikg2. The device time left is about 320 s:
# no tests build, no profile.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start e
GPU_BUILD_JOBS=9 gpu_build new . &
GPU_BUILD_JOBS=7 gpu_build old .devcmd/old &
wait
gpu_with new timeout 60 python3 -m pytest -q -p no:cacheprovider tests/python -k "cuda and hgt" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -10
gpu_with new timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and hgt_pyg and float32" > $R/san-memcheck-generated.log 2>&1
echo "memcheck generated rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-generated.log | tail -1) $(tail -1 $R/san-memcheck-generated.log) $(gpu_elapsed)"
GPU_TP_DEADLINE=245 GPU_TP_TIMEOUT=45 gpu_throughput_ab old new 2 --tf32 \
  --datasets am,mag,wikikg2 --models hgt --modes inference
echo "done $(gpu_elapsed)"

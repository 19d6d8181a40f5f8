#!/usr/bin/env bash
# Session 34 call b: branch hgt-wsum (HGT-PyG's inference program: the
# message sum as a weighted summed GEMM over v rows) against main ade14bb
# (.devcmd/old). Correctness: the whole CUDA pytest, templates_tests'
# weighted summed CUDA cases (the new per-head matrices among them),
# memcheck on those and on the generated HGT-PyG fp32 CUDA cases. Then
# where HGT's inference time goes (hector.bench.profile, am and mag) and a
# throughput A/B of HGT inference on am, mag, wikikg2 and biokg.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
GPU_BUILD_JOBS=10 gpu_build new . tests &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
wait
gpu_with new timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -20
F='Table/SegmentGemm.Cuda/*eighted*:Table/SegmentGemm.Cuda/*PerHead*:Table/SegmentGemm.Cuda/*eightIds*'
timeout 60 ./build-new/bin/templates_tests --gtest_filter="$F" > $R/templates.log 2>&1
echo "templates weighted rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter="$F" > $R/san-memcheck-templates.log 2>&1
echo "memcheck templates rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-templates.log | tail -1) $(grep -E '^\[  PASSED' $R/san-memcheck-templates.log) $(gpu_elapsed)"
gpu_with new timeout 100 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and hgt_pyg and float32" > $R/san-memcheck-generated.log 2>&1
echo "memcheck generated rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-generated.log | tail -1) $(tail -1 $R/san-memcheck-generated.log) $(gpu_elapsed)"
gpu_with new timeout 100 python3 -m hector.bench.profile --tf32 \
  --datasets am,mag --models hgt --modes inference \
  --systems hector --steps 3 --warmup 2 --rows 12 --out $R/profile > $R/profile.log 2>&1
echo "profile rc=$? $(gpu_elapsed)"
grep -E "Self CUDA time total|busy|forward_|inference_|linear|Memset|memset" $R/profile.log | cut -c1-90,150-230 | head -40
GPU_TP_DEADLINE=500 gpu_throughput_ab old new 2 --tf32 \
  --datasets am,mag,wikikg2,biokg --models hgt --modes inference
echo "done $(gpu_elapsed)"

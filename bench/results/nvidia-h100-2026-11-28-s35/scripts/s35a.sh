#!/usr/bin/env bash
# Session 35 call a: branch gated-mix (the GEMM template's gated mix in the
# linear epilogue; HGT-PyG's inference computes its gated skip in out_lin's
# epilogue; gelu and sigmoid in templates/Activations.h) against main
# bedd23a (.devcmd/old). Correctness: the whole CUDA pytest, every CUDA
# case of templates_tests (the tensor-core epilogue changed for every
# call with a bias, parts or a row dot), memcheck on the new gated-mix
# cases and on the generated HGT-PyG fp32 CUDA cases. Then a throughput
# A/B of HGT, RGCN and RGAT inference on am, mag and wikikg2.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=10 gpu_build new . tests &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
wait
gpu_with new timeout 150 python3 -m pytest -q -p no:cacheprovider tests/python -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -20
timeout 150 ./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED" $R/templates.log | head
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/gatedMix*' > $R/san-memcheck-templates.log 2>&1
echo "memcheck templates rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-templates.log | tail -1) $(grep -E '^\[  PASSED' $R/san-memcheck-templates.log) $(gpu_elapsed)"
gpu_with new timeout 100 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and hgt_pyg and float32" > $R/san-memcheck-generated.log 2>&1
echo "memcheck generated rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-generated.log | tail -1) $(tail -1 $R/san-memcheck-generated.log) $(gpu_elapsed)"
GPU_TP_DEADLINE=520 gpu_throughput_ab old new 2 --tf32 \
  --datasets am,mag,wikikg2 --models hgt,rgcn,rgat --modes inference
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 41 call a: the dense-rows kernel's epilogue stores each quad as
# one 16-byte st.global.wb.v4 (__stwb) instead of the four 4-byte stores
# nvcc made of a float4 assignment (perf-notes section 93). Correctness:
# the PTX guard (ctest templates_dense_rows_stores_are_vectors), the
# templates_tests dense cases (bitwise against the tiled kernel) and the
# CUDA GEMM table; memcheck on the dense cases and on the generated
# HGT-PyG and RGCN-PyG CUDA cases; the CUDA pytest of the HGT and RGCN
# layers and the TF32 bound. Speed: HGT and RGCN inference and training on
# am, mag and wikikg2 against main 6d67c09 (`old`, .devcmd/old), three
# interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=10 gpu_build new . tests &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
wait
(cd build-new && ctest -R templates_dense_rows_stores_are_vectors --output-on-failure) > $R/ptx-guard.log 2>&1
echo "ptx guard rc=$? $(grep -E 'kernels|tests passed' $R/ptx-guard.log | tr '\n' ' ') $(gpu_elapsed)"
timeout 120 ./build-new/bin/templates_tests \
  --gtest_filter='*dense*:*Dense*:Table/SegmentGemm.Cuda/*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED|Failure" -A3 $R/templates.log | head -20
S=/usr/local/cuda/bin/compute-sanitizer; command -v compute-sanitizer >/dev/null && S=compute-sanitizer
timeout 60 $S --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests \
  --gtest_filter='Table/SegmentGemm.Cuda*/*dense*:SegmentGemmCuda.Dense*' > $R/san-memcheck-gemm.log 2>&1
echo "memcheck gemm rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-gemm.log | tail -1) $(gpu_elapsed)"
gpu_with new timeout 90 $S --tool memcheck --error-exitcode 99 python3 -m pytest \
  tests/python/test_generated.py -q -x \
  -k "cuda and (hgt_pyg or rgcn_pyg) and declared_hypers and plain" \
  > $R/san-memcheck-py.log 2>&1
echo "memcheck py rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-py.log | tail -1) $(tail -1 $R/san-memcheck-py.log) $(gpu_elapsed)"
gpu_with new timeout 120 python3 -m pytest -q -k "cuda and (tf32 or hgt or rgcn)" \
  tests/python/test_generated.py tests/python/test_nn.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED" $R/pytest.log | head -10
GPU_TP_DEADLINE=520 GPU_TP_TIMEOUT=100 gpu_throughput_ab old new 3 --tf32 \
  --datasets am,mag,wikikg2 --models hgt,rgcn --modes inference,training
echo "done $(gpu_elapsed)"

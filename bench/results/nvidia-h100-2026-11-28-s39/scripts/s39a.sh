#!/usr/bin/env bash
# Session 39 call a: the dense-rows kernel for node-type segments and
# output parts (HGT's kqv projection; nodes numbered by type need no row
# ids, GraphArrays::ntype_sorted_nodes_is_identity). Correctness: the
# templates_tests dense cases (bitwise against the tiled kernel) and the
# whole CUDA GEMM table; memcheck on the dense cases and on the generated
# HGT-PyG and RGCN-PyG CUDA cases (RGCN's per-chunk divisor, section 89,
# had no sanitizer run); the CUDA pytest of the HGT and RGCN layers, the
# graph arrays and deterministic mode. Speed: HGT inference and training
# and RGCN inference on am, mag and wikikg2 against main 53dce54 (`old`,
# .devcmd/old: before sections 89 and 90), one round.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=10 gpu_build new . tests &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
wait
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
gpu_with new timeout 90 python3 -m pytest -q -x -k "cuda and (hgt or rgcn or kernel_arrays or Kernel)" \
  tests/python/test_generated.py tests/python/test_kernel_arrays.py \
  tests/python/test_deterministic.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
GPU_TP_DEADLINE=470 GPU_TP_TIMEOUT=100 gpu_throughput_ab old new 1 --tf32 \
  --datasets am,mag,wikikg2 --models hgt,rgcn --modes inference,training
echo "done $(gpu_elapsed)"

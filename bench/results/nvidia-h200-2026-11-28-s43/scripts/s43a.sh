#!/usr/bin/env bash
# Session 43 call a: the lean dot kernel (session 42's
# experiments/lean-dot.diff applied to main 0dcf0e9, perf-notes section 99).
# Checks: the dot cases of the GEMM table, the
# lean kernel bitwise against linearDotKernel, the gather-order cases,
# memcheck on them and on the generated RGAT-PyG cases, CUDA RGAT pytest;
# Nsight Compute on the wikikg2 step's dots. Speed: RGAT inference and
# training on am, mag and wikikg2, three interleaved rounds of one build
# with HECTOR_GEMM_DOT64=0 (`general`) and without (`lean`, 2 rows in
# flight a lane group), and of a build with 4 rows in flight (`u4`).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=10 gpu_build new . tests &
(
  hector_gpu_cmake_args+=("-DCMAKE_CUDA_FLAGS=-DHECTOR_DOT64_ROWS_IN_FLIGHT=4")
  GPU_BUILD_JOBS=6 gpu_build u4 .
) &
wait
F='*/SegmentGemm.Cuda*/dot*:SegmentGemmCuda.LeanDot*:SegmentGemmCuda.GatherOrder*'
gpu_gtests new gemm "$F"
gpu_gtests new san-memcheck-gemm "$F" memcheck 90
gpu_pytest_memcheck new san-memcheck-py 'cuda and rgat_pyg and declared_hypers'
gpu_with new timeout 150 python3 -m pytest -q -k "cuda and rgat" \
  tests/python/test_generated.py tests/python/test_nn.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_ncu_step new ncu-dots linearDot 4 wikikg2 rgat
for round in 1 2 3; do
  for tag in general lean u4; do
    [ $(($(date +%s) - GPU_T0)) -gt 480 ] && { echo "skip $tag $round"; continue; }
    build=new; [ $tag = u4 ] && build=u4
    HECTOR_GEMM_DOT64=$([ $tag = general ] && echo 0 || echo 1) \
      gpu_with $build timeout 100 python3 -m hector.bench.throughput --tf32 \
      --datasets am,mag,wikikg2 --models rgat --modes inference,training \
      --tag $tag >> $R/tp.jsonl 2>> $R/tp.err
    echo "throughput $tag round $round rc=$? $(gpu_elapsed)"
  done
done
gpu_with new python3 -m hector.bench.compare $R/tp.jsonl --baseline general
echo "done $(gpu_elapsed)"

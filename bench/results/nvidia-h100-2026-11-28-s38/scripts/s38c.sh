#!/usr/bin/env bash
# Session 38 call c: summed-rows chunks of at most 64 edges (main 53dce54,
# kSumChunkEdges 32 -> 64). The CUDA pytest cases of the graph arrays and
# deterministic mode; RGCN and RGAT inference on mag against main f5917d8
# (`old`, .devcmd/old: chunks of 32), one round; then issue 9's run.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
GPU_BUILD_JOBS=5 gpu_build old .devcmd/old &
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=11 gpu_build new . &
wait
gpu_with new timeout 60 python3 -m pytest -q -x -k cuda \
  tests/python/test_kernel_arrays.py tests/python/test_deterministic.py \
  > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
GPU_TP_DEADLINE=260 GPU_TP_TIMEOUT=45 gpu_throughput_ab old new 1 --tf32 \
  --datasets mag --models rgcn,rgat --modes inference
gpu_issue9_run new 320
echo "done $(gpu_elapsed)"

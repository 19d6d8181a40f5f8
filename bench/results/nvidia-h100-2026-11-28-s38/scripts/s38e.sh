#!/usr/bin/env bash
# Session 38 call e: the summed RGCN GEMM's divisor once a chunk (main
# a4ba1d1: gv.sum_chunk_rel_in_degree, no scaleGather). The CUDA pytest
# cases of the RGCN layers, the graph arrays and deterministic mode; then
# RGCN inference throughput on mag, am and wikikg2 (compare with call c's
# `new`, chunks of 64 with the lookup through sum_chunk_eid). What the
# device time left allows: no A/B build of the old tree.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start e
GPU_BUILD_JOBS=16 gpu_build new .
gpu_with new timeout 40 python3 -m pytest -q -x -k "cuda and (rgcn or kernel_arrays or Kernel)" \
  tests/python/test_generated.py tests/python/test_kernel_arrays.py \
  tests/python/test_deterministic.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_with new timeout 45 python3 -m hector.bench.throughput --tf32 \
  --datasets mag,am,wikikg2 --models rgcn --modes inference --tag new \
  > $R/tp.jsonl 2> $R/tp.err
echo "throughput rc=$? $(gpu_elapsed)"
cat $R/tp.jsonl

#!/usr/bin/env bash
# Session 43 call b: RGAT-PyG's bias fill and HGT-PyG's zero fill of the
# weighted summed GEMM's output moved into the softmax traversal that
# runs before it (each destination row written by the row's group), as a
# hand edit of the generated inference programs in .devcmd/exp (main
# 9ef305c otherwise). Checks: the CUDA RGAT and HGT pytest cases of the
# edited tree, memcheck on its generated RGAT-PyG and HGT-PyG cases.
# Speed: RGAT and HGT inference on am, mag and wikikg2, main (`old`)
# against the edit (`new`), three interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
GPU_BUILD_JOBS=8 gpu_build old . &
GPU_BUILD_JOBS=8 gpu_build new .devcmd/exp &
wait
gpu_with new timeout 200 python3 -m pytest -q -k \
  "cuda and (rgat or hgt or RGAT or HGT)" tests/python/test_generated.py \
  tests/python/test_nn.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_pytest_memcheck new san-memcheck-py \
  'cuda and (rgat_pyg or hgt_pyg) and declared_hypers' 120
GPU_TP_DEADLINE=480 gpu_throughput_ab old new 3 --tf32 \
  --datasets am,mag,wikikg2 --models rgat,hgt --modes inference
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 43 call e: the summed GEMM's contiguous runs take their row
# numbers (and weights) a window of 16 entries at a time, one lane an
# entry, passed to the copying lanes by shuffles (stageRunByWindows;
# perf-notes section 102), against main 0efcf22 (.devcmd/old). Checks: the
# summed and weighted GEMM table cases, also under memcheck; the CUDA
# pytest cases of the generated models. Speed: RGCN, RGAT and HGT
# inference on am, mag and wikikg2, two interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start e
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
GPU_BUILD_JOBS=10 gpu_build new . tests &
wait
F='*SegmentGemm.Cuda*/*ummed*:*SegmentGemm.Cuda*/*Summed*'
gpu_gtests new gemm "$F" "" 60
gpu_gtests new san-memcheck-gemm "$F" memcheck 60
gpu_with new timeout 60 python3 -m pytest -q -x -k "cuda and declared_hypers" \
  tests/python/test_generated.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
GPU_TP_DEADLINE=250 GPU_TP_TIMEOUT=60 gpu_throughput_ab old new 2 --tf32 \
  --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference
echo "done $(gpu_elapsed)"

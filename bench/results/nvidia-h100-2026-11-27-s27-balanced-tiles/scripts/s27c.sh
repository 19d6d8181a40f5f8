#!/usr/bin/env bash
# Session 27 call c: the balanced summed GEMM (kSumRowCost 4, one wave)
# against main before it (597558c, .devcmd/old): templates_tests' CUDA
# cases, memcheck and racecheck on the summed cases, CUDA pytest's RGCN
# and deterministic cases (the bundled models' summed GEMMs), and the
# `hector` system's --tf32 throughput on RGCN, two interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
GPU_BUILD_JOBS=11 gpu_build new . tests &
GPU_BUILD_JOBS=5 gpu_build old .devcmd/old &
wait
./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/summedRows*:Table/SegmentGemm.DeterministicIsBitwiseRepeatableCuda/summedRows*' > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(gpu_elapsed)"
timeout 150 compute-sanitizer --tool racecheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/summedRows*' > $R/san-racecheck.log 2>&1
echo "racecheck rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $R/san-racecheck.log | tail -1) $(gpu_elapsed)"
gpu_with new timeout 200 python3 -m pytest -q -p no:cacheprovider tests/python -k "cuda and (rgcn or deterministic)" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
GPU_TP_TIMEOUT=150 gpu_throughput_ab old new 2 --tf32 --datasets am,mag,wikikg2,biokg,fb15k,bgs --models rgcn --modes inference,training > $R/ab.txt 2>&1
cat $R/ab.txt | tail -30
echo "done $(gpu_elapsed)"

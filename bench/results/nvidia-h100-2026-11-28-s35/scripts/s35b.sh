#!/usr/bin/env bash
# Session 35 call b: why call a's gated mix gained nothing. Branch
# gated-mix f11ffa2 (the mix's rows loaded a tile ahead of its epilogue,
# an instantiation of its own) against main bedd23a (.devcmd/old):
# templates_tests' gated-mix CUDA cases and memcheck on them; a torch
# profile of HGT's am inference (per-kernel times) with each tree; then a
# throughput A/B of HGT inference on am, mag and wikikg2.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
GPU_BUILD_JOBS=10 gpu_build new . tests &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
wait
timeout 60 ./build-new/bin/templates_tests --gtest_filter='*Cuda*/gatedMix*:*Cuda*/*Bias*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/gatedMix*' > $R/san-memcheck-templates.log 2>&1
echo "memcheck templates rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-templates.log | tail -1) $(grep -E '^\[  PASSED' $R/san-memcheck-templates.log) $(gpu_elapsed)"
for tag in old new; do
  gpu_with $tag timeout 90 python3 -m hector.bench.profile --tf32 --datasets am \
    --models hgt --modes inference --systems hector --steps 3 --warmup 2 \
    --rows 12 --out $R/profile-$tag > $R/profile-$tag.log 2>&1
  echo "profile $tag rc=$? $(gpu_elapsed)"
  grep -E "gemm|trav|Kernel|step" $R/profile-$tag.log | cut -c1-70,160-230 | head -14
done
GPU_TP_DEADLINE=520 gpu_throughput_ab old new 2 --tf32 \
  --datasets am,mag,wikikg2 --models hgt --modes inference
echo "done $(gpu_elapsed)"

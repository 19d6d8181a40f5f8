#!/usr/bin/env bash
# Session 41 call e: the dense kernel's switches as OverridableSwitch
# objects that own their variable and off value (host code only; the PTX
# of every CUDA source is unchanged, scripts/ptx-snapshot.sh). The dense
# GEMM cases and the switch tests, which override the switches; then
# HECTOR_GEMM_DENSE=0 and HECTOR_GEMM_DENSE_WINDOWS=1 read from the
# environment: which kernels one HGT am inference step launches.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start e
GPU_BUILD_JOBS=16 gpu_build new . tests
timeout 90 ./build-new/bin/templates_tests \
  --gtest_filter='HostSwitches*:SegmentGemmCuda.Dense*:Table/SegmentGemm.Cuda/*ense*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED|Failure" -A3 $R/templates.log | head -20
for env in "" HECTOR_GEMM_DENSE=0 HECTOR_GEMM_DENSE_WINDOWS=1; do
  [ $(($(date +%s) - GPU_T0)) -lt 230 ] || { echo "skipped $env"; continue; }
  gpu_with new env $env timeout 60 python3 -m hector.bench.profile --tf32 \
    --datasets am --models hgt --systems hector-cr --modes inference \
    --steps 1 --warmup 1 --rows 12 --out $R/profile-${env:-default} > /dev/null 2>&1
  echo "profile ${env:-default} rc=$? dense launches: $(grep -c denseRowsMmaKernel $R/profile-${env:-default}/*.txt) $(grep -E '^step' $R/profile-${env:-default}/*.txt) $(gpu_elapsed)"
  grep -E "denseRows|linearMma" $R/profile-${env:-default}/*.txt | cut -c1-100,161-216
done
echo "done $(gpu_elapsed)"

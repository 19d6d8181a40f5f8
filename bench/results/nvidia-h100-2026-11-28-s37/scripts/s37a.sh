#!/usr/bin/env bash
# Session 37 call a: the dense-rows kernel (templates/gemm/DenseRowsMma.cu)
# for RGCN's root GEMM and RGAT's self-loop GEMM. Correctness: its
# templates_tests cases (the table's dense cases on the GPU, bitwise
# against the tiled kernel, which calls it takes) and the whole CUDA GEMM
# table. Speed: bench_segment_gemm's TF32 + bias root case at am's rows,
# the tiled kernel (HECTOR_GEMM_DENSE=0) against each block shape built;
# the host gap of RGCN's am and mag forward (profile); then RGCN and RGAT
# inference on am, mag and wikikg2 against main 804972a (`old`, .devcmd/old), two interleaved
# rounds.
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
for round in 1 2; do
  for shape in tiled 4x3 4x2 4x4 8x2 8x3 8x4; do
    if [ $shape = tiled ]; then env="HECTOR_GEMM_DENSE=0"; else env="HECTOR_DENSE_ROWS_SHAPE=$shape"; fi
    echo "$shape $(env $env timeout 30 ./build-new/bin/bench_segment_gemm 1885136 64 2>&1 | grep 'tf32 + bias')"
  done
done | tee $R/dense-shapes.txt
echo "shapes $(gpu_elapsed)"
gpu_with new timeout 120 python3 -m hector.bench.profile --tf32 \
  --datasets am,mag --models rgcn --systems hector-u,hector --modes inference \
  --steps 10 --warmup 3 --rows 6 --out $R/profile > $R/profile.log 2>&1
echo "profile rc=$? $(gpu_elapsed)"
grep -E "^==|^step" $R/profile.log
GPU_TP_DEADLINE=480 gpu_throughput_ab old new 2 --tf32 \
  --datasets am,mag,wikikg2 --models rgcn,rgat --modes inference
echo "done $(gpu_elapsed)"

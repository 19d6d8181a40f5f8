#!/usr/bin/env bash
# Session 39 call d: the dense-rows kernel multiplies all two or three
# windows of a TF32 call in one block (HGT's kqv projection reads x once).
# The templates_tests dense cases (both ways, bitwise against the tiled
# kernel) and memcheck on the kqv-shaped ones; bench_segment_gemm's TF32 +
# bias case at am's rows and 192 columns, windows together, apart
# (HECTOR_GEMM_DENSE_WINDOWS=1) and on the tiled kernel, two rounds; HGT
# inference on am and mag with the windows apart and together, one round.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
GPU_BUILD_JOBS=16 gpu_build new . tests
timeout 60 ./build-new/bin/templates_tests \
  --gtest_filter='*dense*:*Dense*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED|Failure" -A4 $R/templates.log | head -20
S=/usr/local/cuda/bin/compute-sanitizer; command -v compute-sanitizer >/dev/null && S=compute-sanitizer
timeout 40 $S --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests \
  --gtest_filter='Table/SegmentGemm.Cuda/*denseSegments*:Table/SegmentGemm.Cuda/*denseTransposedWindows*' > $R/san-memcheck-gemm.log 2>&1
echo "memcheck gemm rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-gemm.log | tail -1) $(gpu_elapsed)"
for round in 1 2; do
  for mode in together apart tiled; do
    case $mode in
      together) env="HECTOR_GEMM_DENSE_WINDOWS=0" ;;
      apart) env="HECTOR_GEMM_DENSE_WINDOWS=1" ;;
      tiled) env="HECTOR_GEMM_DENSE=0" ;;
    esac
    echo "$mode $(env $env timeout 30 ./build-new/bin/bench_segment_gemm 1885136 192 root 2>&1 | grep 'tf32 + bias')"
  done
done | tee $R/windows.txt
echo "bench $(gpu_elapsed)"
for mode in apart together; do
  w=$([ $mode = apart ] && echo 1 || echo 0)
  HECTOR_GEMM_DENSE_WINDOWS=$w gpu_with new timeout 60 python3 -m hector.bench.throughput \
    --tf32 --datasets am,mag --models hgt --modes inference --tag $mode >> $R/tp.jsonl 2>> $R/tp.err
  echo "throughput $mode rc=$? $(gpu_elapsed)"
done
gpu_with new python3 -m hector.bench.compare $R/tp.jsonl --baseline apart
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 41 call c: RGAT's attention scores in the order of the row they
# gather (perf-notes section 95): the pair scores by source
# (pair_src_order), the chunk scores by destination (sum_chunk_dst_order),
# in the 8-lane dot kernel. Correctness: the GEMM table's dot and
# gather-order cases on CUDA, the bitwise check with and without the order,
# memcheck on them and on the generated RGAT-PyG cases, the CUDA pytest of
# the RGAT layers and the graph arrays. Speed: RGAT inference and training
# on am, mag and wikikg2, the order on and off in one build
# (HECTOR_GEMM_GATHER_ORDER=0), three interleaved rounds; then the kernel
# table of wikikg2's RGAT inference.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
GPU_BUILD_JOBS=16 gpu_build new . tests
timeout 120 ./build-new/bin/templates_tests \
  --gtest_filter='*GatherOrder*:*GatherOrders*:Table/SegmentGemm.Cuda/dot*:Table/SegmentGemm.Cuda/wide*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED|Failure" -A3 $R/templates.log | head -20
S=/usr/local/cuda/bin/compute-sanitizer; command -v compute-sanitizer >/dev/null && S=compute-sanitizer
timeout 90 $S --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests \
  --gtest_filter='*GatherOrder*:Table/SegmentGemm.Cuda/dot*' > $R/san-memcheck-gemm.log 2>&1
echo "memcheck gemm rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-gemm.log | tail -1) $(gpu_elapsed)"
gpu_with new timeout 90 $S --tool memcheck --error-exitcode 99 python3 -m pytest \
  tests/python/test_generated.py -q -x -k "cuda and rgat_pyg and declared_hypers" \
  > $R/san-memcheck-py.log 2>&1
echo "memcheck py rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-py.log | tail -1) $(tail -1 $R/san-memcheck-py.log) $(gpu_elapsed)"
gpu_with new timeout 120 python3 -m pytest -q -k "cuda and (rgat or kernel_arrays or Kernel or tf32)" \
  tests/python/test_generated.py tests/python/test_kernel_arrays.py \
  tests/python/test_nn.py tests/python/test_deterministic.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED" $R/pytest.log | head -10
for round in 1 2 3; do
  for tag in off on; do
    [ $(($(date +%s) - GPU_T0)) -lt 500 ] || { echo "round $round $tag skipped"; continue; }
    if [ $tag = off ]; then export HECTOR_GEMM_GATHER_ORDER=0; else unset HECTOR_GEMM_GATHER_ORDER; fi
    gpu_with new timeout 100 python3 -m hector.bench.throughput --tf32 \
      --datasets am,mag,wikikg2 --models rgat --modes inference,training \
      --tag $tag >> $R/tp.jsonl 2>> $R/tp.err
    echo "throughput $tag round $round rc=$? $(gpu_elapsed)"
  done
done
unset HECTOR_GEMM_GATHER_ORDER
gpu_with new python3 -m hector.bench.compare $R/tp.jsonl --baseline off
[ $(($(date +%s) - GPU_T0)) -lt 540 ] && gpu_with new timeout 50 python3 -m hector.bench.profile --tf32 \
  --datasets wikikg2 --models rgat --systems hector-cr --modes inference \
  --steps 5 --warmup 2 --rows 10 --out $R/profile > $R/profile.log 2>&1 &&
  sed -n 5,12p $R/profile/*.txt | cut -c30-90,161-216 && tail -1 $R/profile/*.txt
echo "done $(gpu_elapsed)"

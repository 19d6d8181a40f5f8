#!/usr/bin/env bash
# Session 42 call b: RGAT's score dots over rows sorted by the row they
# gather, with every index in that order (pair_src_order_src/_etype,
# sum_chunk_dst_order_dst/_etype; perf-notes section 97). Checks: the
# gather-order GEMM cases (bitwise against the plain order), the argument
# checks, memcheck on them and on the generated RGAT-PyG cases, CUDA
# pytest (RGAT, kernel arrays); Nsight Compute on the dots of one wikikg2
# inference step; speed: RGAT inference and training on am, mag and
# wikikg2 against main (`old`, .devcmd/old from `git archive`), three
# interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
GPU_BUILD_JOBS=10 gpu_build new . tests &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
wait
F='SegmentGemmCuda.GatherOrder*:*/SegmentGemm.Cuda*/*GatherOrder*:SegmentGemmArgsCheck.*'
gpu_gtests new gemm "$F"
gpu_gtests new san-memcheck-gemm "$F" memcheck 90
S=/usr/local/cuda/bin/compute-sanitizer; command -v compute-sanitizer >/dev/null && S=compute-sanitizer
gpu_with new timeout 90 $S --tool memcheck --error-exitcode 99 python3 -m pytest \
  tests/python/test_generated.py -q -x -k "cuda and rgat_pyg and declared_hypers" \
  > $R/san-memcheck-py.log 2>&1
echo "memcheck py rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-py.log | tail -1) $(tail -1 $R/san-memcheck-py.log) $(gpu_elapsed)"
gpu_with new timeout 150 python3 -m pytest -q -k "cuda and (rgat or kernel_arrays)" \
  tests/python/test_generated.py tests/python/test_nn.py tests/python/test_kernel_arrays.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
N=ncu; command -v ncu >/dev/null || N=/usr/local/cuda/bin/ncu
gpu_with new timeout 100 $N --clock-control none -k regex:linearDot \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
  --section WarpStateStats -c 4 \
  python3 -m hector.bench.profile --tf32 --datasets wikikg2 --models rgat \
  --systems hector-cr --modes inference --steps 1 --warmup 0 --rows 4 \
  --out $R/ncu-profile-wikikg2 > $R/ncu-dots-wikikg2.txt 2>&1
echo "ncu rc=$? $(gpu_elapsed)"
grep -E "^  [a-zA-Z_:<> ]*(void|Kernel)|^  void|Duration|DRAM Throughput|L2 Hit|L1/TEX Hit|Achieved Occupancy|Warp Cycles Per Issued" $R/ncu-dots-wikikg2.txt | cut -c1-150 | head -40
GPU_TP_DEADLINE=480 GPU_TP_TIMEOUT=100 gpu_throughput_ab old new 3 --tf32 \
  --datasets am,mag,wikikg2 --models rgat --modes inference,training
echo "done $(gpu_elapsed)"

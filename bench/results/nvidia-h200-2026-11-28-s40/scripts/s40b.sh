#!/usr/bin/env bash
# Session 40 call b: call a's script again after its fix. Call a hung in
# the first dense-rows launch of every check (blocksForTiles called
# itself: a host recursion without end), so nothing below ran there.
# The checks session 39 left for a GPU. The generated
# layers' TF32 bound at the declared hypers (the kqv projection's windows
# in one block, section 92) and the CUDA pytest of the HGT layers; the
# environment switches read through HostSwitches.h (envIs,
# OverridableSwitch) and the dense kernel's tilesOf/blocksForTiles on the
# host: templates_tests' dense, gated-mix and switch cases; memcheck on
# the dense cases and on the generated HGT-PyG cases at the declared
# hypers. Then Nsight Compute on one step of HGT-PyG inference on am
# (hector-cr): where its kernels stand against DRAM.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new . tests
gpu_with new timeout 150 python3 -m pytest -q -k "cuda and (tf32 or hgt)" \
  tests/python/test_generated.py tests/python/test_nn.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -10
timeout 100 ./build-new/bin/templates_tests \
  --gtest_filter='HostSwitches*:SegmentGemmCuda.Dense*:Table/SegmentGemm.Cuda/*ense*:Table/SegmentGemm.Cuda/*ix*:LaunchGraph*' \
  > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED|Failure" -A4 $R/templates.log | head -20
S=/usr/local/cuda/bin/compute-sanitizer; command -v compute-sanitizer >/dev/null && S=compute-sanitizer
gpu_with new timeout 70 $S --tool memcheck --error-exitcode 99 python3 -m pytest \
  tests/python/test_generated.py -q -x -k "cuda and hgt_pyg and declared" \
  > $R/san-memcheck-py.log 2>&1
echo "memcheck py rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-py.log | tail -1) $(tail -1 $R/san-memcheck-py.log) $(gpu_elapsed)"
timeout 50 $S --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests \
  --gtest_filter='SegmentGemmCuda.Dense*' > $R/san-memcheck-gemm.log 2>&1
echo "memcheck gemm rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-gemm.log | tail -1) $(gpu_elapsed)"
# Nsight Compute only while the call has time left for it.
[ $(($(date +%s) - GPU_T0)) -lt 400 ] || { echo "no time for ncu $(gpu_elapsed)"; exit 0; }
N=ncu; command -v ncu >/dev/null || N=/usr/local/cuda/bin/ncu
gpu_with new timeout 140 $N --clock-control none \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
  --section WarpStateStats --section LaunchStats \
  -k 'regex:inference_trav|linearMma|denseRows|zeroSpans' -c 10 \
  python3 -m hector.bench.profile --tf32 --datasets am --models hgt \
  --systems hector-cr --modes inference --steps 1 --warmup 1 --rows 8 \
  --out $R/ncu-profile > $R/ncu-am-hgt.txt 2>&1
echo "ncu rc=$? $(grep -c 'gpu__time_duration\|Duration' $R/ncu-am-hgt.txt) $(gpu_elapsed)"
grep -E "^  [a-z_:<> ]*(trav|Kernel)|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|L2 Hit|L1/TEX Hit" $R/ncu-am-hgt.txt | head -80
echo "done $(gpu_elapsed)"

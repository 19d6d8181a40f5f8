#!/usr/bin/env bash
# Session 44, call c. (1) main with two host/device helpers shared
# (templates/CudaHost.h aligned16 for the GEMM launchers and the row fill;
# sumOverDotLanes for both dot kernels): the whole templates_tests suite
# on the GPU, memcheck on the dot, fill and summed cases and on the
# generated RGAT-PyG and RGCN-PyG cases, and the CUDA pytest cases of the
# generated models. (2) Why call a's 8-lane summed GEMM was slower:
# Nsight Compute on bench_summed_rows's first linearMmaKernel launches on
# mag (the weighted and the summed call), 16 lanes against 8, from the
# experiment's tree (.devcmd/exp = branch s44-exp).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
PYTHONPATH=runtime/python python3 bench/gemm/dump_graph.py mag /tmp/mag.bin \
  > $R/dump-mag.log 2>&1 &
GPU_BUILD_JOBS=10 gpu_build new . tests &
GPU_BUILD_JOBS=3 gpu_build_target sr8 .devcmd/exp bench_summed_rows &
GPU_BUILD_JOBS=3 gpu_build_target sr16 .devcmd/exp bench_summed_rows \
  -DHECTOR_SUM_LANES=16 &
wait
N=$(gpu_cuda_tool ncu /usr/local/cuda/bin)
for b in sr16 sr8; do
  timeout 90 "$N" --clock-control none -k regex:linearMmaKernel -c 4 \
    --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section WarpStateStats --section InstructionStats \
    --section SchedulerStats --section MemoryWorkloadAnalysis \
    ./build-$b/bin/bench_summed_rows /tmp/mag.bin 64 64 0 > $R/ncu-$b.txt 2>&1
  echo "ncu $b rc=$? $(gpu_elapsed)"
  grep -E "^  [a-zA-Z_:<> ]*(void|Kernel)|^  void|Duration|DRAM Throughput|\
Executed Ipc A|Executed Instructions  |Achieved Occupancy|Registers Per|\
Warp Cycles Per Issued|Eligible Warps|No Eligible" $R/ncu-$b.txt |
    sed -E 's/ +/ /g' | cut -c1-120
done
gpu_gtests new templates '*' "" 150
F='*SegmentGemm.Cuda*/dot*:SegmentGemmCuda.LeanDot*:FillRows.Cuda*:*SegmentGemm.Cuda*/*ummed*'
gpu_gtests new san-memcheck-gemm "$F" memcheck 90
gpu_pytest_memcheck new san-memcheck-py \
  'cuda and (rgat_pyg or rgcn_pyg) and declared_hypers' 90
gpu_with new timeout 150 python3 -m pytest -q -k cuda \
  tests/python/test_generated.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
echo "done $(gpu_elapsed)"

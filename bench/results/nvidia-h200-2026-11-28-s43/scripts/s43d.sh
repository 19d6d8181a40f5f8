#!/usr/bin/env bash
# Session 43 call d: where the summed GEMM's time goes, instruction by
# instruction. Nsight Compute with source counters (warp stall samples
# per SASS instruction) on one linearMmaKernel launch of the inference
# step: RGCN's summed GEMM on wikikg2 and am, RGAT's weighted summed GEMM
# on wikikg2 (main 9ef305c). Each report is printed as its details page
# and its SASS source page (csv).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
GPU_BUILD_JOBS=16 gpu_build new .
n=$(gpu_cuda_tool ncu /usr/local/cuda/bin)
for c in "rgcn wikikg2" "rgat wikikg2" "rgcn am"; do
  set -- $c
  [ $(($(date +%s) - GPU_T0)) -gt 330 ] && { echo "skip $1 $2"; continue; }
  gpu_with new timeout 110 "$n" --clock-control none -k regex:linearMmaKernel \
    -c 1 --section SpeedOfLight --section Occupancy --section WarpStateStats \
    --section SchedulerStats --section InstructionStats --section SourceCounters \
    --section MemoryWorkloadAnalysis --section LaunchStats -f -o "$R/sum-$1-$2" \
    python3 -m hector.bench.profile --tf32 --datasets "$2" --models "$1" \
    --systems hector-cr --modes inference --steps 1 --warmup 0 --rows 4 \
    --out "$R/sum-$1-$2-profile" > "$R/sum-$1-$2.log" 2>&1
  echo "ncu $1 $2 rc=$? $(gpu_elapsed)"
  "$n" --import "$R/sum-$1-$2.ncu-rep" --page details > "$R/sum-$1-$2.txt" 2>&1
  "$n" --import "$R/sum-$1-$2.ncu-rep" --page source --csv --print-source sass \
    > "$R/sum-$1-$2-sass.csv" 2>&1 ||
    "$n" --import "$R/sum-$1-$2.ncu-rep" --page source --csv \
      > "$R/sum-$1-$2-sass.csv" 2>&1
  echo "import rc=$? $(wc -l < "$R/sum-$1-$2-sass.csv") sass lines $(gpu_elapsed)"
  grep -E "Duration|Warp Cycles Per Issued|Achieved Occupancy|Executed Ipc A|Registers Per|DRAM Throughput|L2 Hit" \
    "$R/sum-$1-$2.txt" | head -8
  rm -f "$R/sum-$1-$2.ncu-rep"
done
echo "done $(gpu_elapsed)"

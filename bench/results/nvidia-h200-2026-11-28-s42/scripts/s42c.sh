#!/usr/bin/env bash
# Session 42 call c: (1) why mag's RGAT training step came out 3.7% slower
# with the sorted score dots (call b): per-kernel tables of that step,
# main (`old`) against 8271f02 (`new`); (2) the dot kernel with each
# step's row fields loaded one step ahead (`pipe`, this tree; 80 registers
# against 64): its GEMM cases and memcheck, then RGAT inference on am, mag
# and wikikg2 and mag training, old/new/pipe, two interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
GPU_BUILD_JOBS=6 gpu_build pipe . tests &
GPU_BUILD_JOBS=5 gpu_build new .devcmd/new &
GPU_BUILD_JOBS=5 gpu_build old .devcmd/old &
wait
F='*/SegmentGemm.Cuda*/dot*:SegmentGemmCuda.GatherOrder*'
gpu_gtests pipe gemm "$F"
gpu_gtests pipe san-memcheck-gemm "$F" memcheck 90
for tag in old new; do
  gpu_with $tag timeout 90 python3 -m hector.bench.profile --tf32 \
    --datasets mag --models rgat --systems hector-cr --modes training \
    --steps 5 --warmup 2 --rows 22 --out $R/profile-$tag > $R/profile-$tag.log 2>&1
  echo "profile $tag rc=$? $(gpu_elapsed)"
  for f in $R/profile-$tag/*.txt; do sed -n 5,28p $f | grep -v "Activity\|^---" | cut -c1-70,161-216; tail -1 $f; done
done
for round in 1 2; do
  for tag in old new pipe; do
    [ $(($(date +%s) - GPU_T0)) -gt 500 ] && { echo "skip $tag $round"; continue; }
    gpu_with $tag timeout 100 python3 -m hector.bench.throughput --tf32 \
      --datasets am,mag,wikikg2 --models rgat --modes inference --tag $tag >> $R/tp.jsonl 2>> $R/tp.err
    gpu_with $tag timeout 60 python3 -m hector.bench.throughput --tf32 \
      --datasets mag --models rgat --modes training --tag $tag >> $R/tp.jsonl 2>> $R/tp.err
    echo "throughput $tag round $round $(gpu_elapsed)"
  done
done
gpu_with new python3 -m hector.bench.compare $R/tp.jsonl --baseline old
echo "done $(gpu_elapsed)"

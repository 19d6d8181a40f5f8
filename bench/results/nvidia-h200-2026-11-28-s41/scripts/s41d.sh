#!/usr/bin/env bash
# Session 41 call d: the bench's HGT output rows without a per-call mask
# (perf-notes section 95: a view of one run of rows, else the runs copied
# together, found before the timed calls), against main 89167e4's Python
# package (`old`, .devcmd/old) on one build: mag HGT inference and
# training, hector and hector-cr, two interleaved rounds. Then issue 9's
# run on this H200 from this tree (sections 94 and 95 included).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start d
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build new .
for round in 1 2; do
  for tag in old new; do
    tree=.; [ $tag = old ] && tree=.devcmd/old
    PYTHONPATH="$PWD/$tree/runtime/python" HECTOR_BUILD_DIR="$PWD/build-new" \
      timeout 100 python3 -m hector.bench.throughput --tf32 --datasets mag \
      --models hgt --systems hector,hector-cr --modes inference,training \
      --tag $tag >> $R/tp.jsonl 2>> $R/tp.err
    echo "throughput $tag round $round rc=$? $(gpu_elapsed)"
  done
done
gpu_with new python3 -m hector.bench.compare $R/tp.jsonl --baseline old
gpu_issue9_run new 330
echo "done $(gpu_elapsed)"

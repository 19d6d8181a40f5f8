#!/usr/bin/env bash
# Session 21 call c: chunk length of the chunked node-row launches
# (HECTOR_ROWS_PER_GROUP, an experiment in launchShape) on the large
# graphs, one build, interleaved rounds; TF32 as the final run will use.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start c
GPU_BUILD_JOBS=16 gpu_build new .
for round in 1 2; do
  for v in 1 3 8; do
    HECTOR_ROWS_PER_GROUP=$v gpu_with new timeout 100 python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training --tag rpg$v >> $R/tp.jsonl 2>> $R/tp.err
    echo "rpg$v round $round rc=$? $(gpu_elapsed)"
  done
done
gpu_with new python3 -m hector.bench.compare $R/tp.jsonl --baseline rpg1
echo "done $(gpu_elapsed)"

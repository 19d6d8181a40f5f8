#!/usr/bin/env bash
# Session 30 call e: heavy-row blocks of 512 threads
# (-DHECTOR_HEAVY_GROUP_SIZE=512) against 1024 on this tree, for RGAT now
# that its inference program has its own softmax traversal (perf-notes 67:
# mag's heavy launch moves 0.66 GB in 0.83 ms). CUDA pytest's RGAT-PyG
# cases on the variant; throughput of RGAT on mag, am, biokg and
# wikikg2, two interleaved rounds. Information for the next session: no
# code depends on it.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start e
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
(VARIANT_JOBS=8 bench/build-variant.sh h512 "-DHECTOR_HEAVY_GROUP_SIZE=512" > $R/build-h512.log 2>&1) &
VARIANT_JOBS=8 bench/build-variant.sh base "" > $R/build-base.log 2>&1
wait
echo "builds $(gpu_elapsed)"; tail -1 $R/build-h512.log; tail -1 $R/build-base.log
gpu_with h512 timeout 60 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and rgat_pyg" > $R/pytest-h512.log 2>&1
echo "pytest h512 rc=$? $(tail -1 $R/pytest-h512.log) $(gpu_elapsed)"
for round in 1 2; do
  for tag in base h512; do
    gpu_with $tag timeout 60 python3 -m hector.bench.throughput --tf32 --datasets mag,am,biokg,wikikg2 --models rgat --modes inference,training --tag $tag >> $R/tp.jsonl 2>> $R/tp.err
    echo "throughput $tag round $round rc=$? $(gpu_elapsed)"
  done
done
gpu_with base python3 -m hector.bench.compare $R/tp.jsonl --baseline base
echo "done $(gpu_elapsed)"

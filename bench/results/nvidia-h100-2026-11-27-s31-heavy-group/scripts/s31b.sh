#!/usr/bin/env bash
# Session 31 call b, on call a's machine and builds: a second and third
# round of throughput (old, new), the comparison over all three rounds
# (call a's round is in its own tp.jsonl; this call's compare uses its
# two), and the harness's RGAT and HGT inference rows on am, mag and
# wikikg2 for old and new, interleaved.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
[ -d build-new ] && [ -d build-old ] || { echo "no builds: not call a's machine"; exit 3; }
TP="--tf32 --datasets am,mag,wikikg2,biokg --models rgcn,rgat,hgt --modes inference,training"
for round in 2 3; do
  for tag in old new; do
    gpu_with $tag timeout 75 python3 -m hector.bench.throughput $TP --tag $tag >> $R/tp.jsonl 2>> $R/tp.err
    echo "throughput $tag round $round rc=$? $(gpu_elapsed)"
  done
done
gpu_with new python3 -m hector.bench.compare $R/tp.jsonl --baseline old > $R/ab.txt 2>&1
cat $R/ab.txt
for tag in old new old new; do
  [ $(($(date +%s) - GPU_T0)) -gt 500 ] && { echo "skip bench $tag $(gpu_elapsed)"; continue; }
  gpu_with $tag timeout 60 python3 -m hector.bench --tf32 --datasets am,mag,wikikg2 --models rgat,hgt --modes inference --systems hector-cr --out $R/bench-$tag --no-chart > $R/bench-$tag.log 2>&1
  echo "bench $tag rc=$? $(gpu_elapsed)"; grep -E "^\[" $R/bench-$tag.log | sed "s/^/$tag /"
done
echo "done $(gpu_elapsed)"

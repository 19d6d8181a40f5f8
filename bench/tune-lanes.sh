#!/usr/bin/env bash
# Builds the bundled *_pyg libraries with several HECTOR_ELEMENTS_PER_WORKER_LANE
# and HECTOR_BATCH values, given as E:B (templates/traversal/Traversal.h),
# and profiles each on the GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
for cfg in "$@"; do
  bench/build-variant.sh "e$cfg" \
    "-DHECTOR_ELEMENTS_PER_WORKER_LANE=${cfg%:*} -DHECTOR_BATCH=${cfg#*:}"
done
for e in "$@"; do
  echo "=== elements per lane:batch $e"
  HECTOR_BUILD_DIR=$PWD/build-e$e PYTHONPATH=$PWD/runtime/python python3 -m hector.bench.profile \
    --datasets mutag,fb15k,bgs --systems hector --modes inference --rows 4 --out ${OUT:-/tmp}/e$e 2>&1 \
    | grep -E "^== |forward_trav|hector_[a-z_]*::forward"
done

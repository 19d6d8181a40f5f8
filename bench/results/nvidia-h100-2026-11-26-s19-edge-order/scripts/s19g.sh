#!/usr/bin/env bash
# Session 19 call g: inference kernel profiles of the three models on mag
# and wikikg2, on call f's build of f1f9c15 (build-new, still on the
# machine).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu-env.sh
export PYTHONPATH=$PWD/runtime/python HECTOR_BUILD_DIR=$PWD/build-new
timeout 150 python3 -m hector.bench.profile --datasets wikikg2,mag --models rgat,hgt,rgcn --modes inference --out $OUT/prof > $OUT/prof.log 2>&1

#!/usr/bin/env bash
# The main job: set up, build, compile a bundled model with hectorc and build
# its layer library (hector.compile: hectorc, then a standalone CMake build of
# the output), then train two layers of it a few epochs with the generated
# kernels on a built-in synthetic graph (GPU if there is one, else CPU). The
# library gets CUDA kernels only when torch sees a GPU.
#
#   scripts/run-main.sh [MODEL]     MODEL: rgat (default), rgcn or hgt
#   EPOCHS=30 scripts/run-main.sh   more epochs (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
scripts/build.sh

model="${1:-rgat}"
export HECTOR_BUILD_DIR="$PWD/build"
export HECTORC="$PWD/build/bin/hectorc"
export PYTHONPATH="$PWD/runtime/python${PYTHONPATH:+:$PYTHONPATH}"

echo "== hector.compile models/$model.hgnn -> build/out/$model (hectorc + CMake)"
start=$(date +%s)
.venv/bin/python -c '
import sys, torch, hector
lib = hector.compile(sys.argv[1], sys.argv[2], jobs=int(sys.argv[3]),
                     cuda=torch.cuda.is_available())
print(f"built {lib.library_path}")
' "models/$model.hgnn" "build/out/$model" "$(nproc)"
echo "== compiled and built in $(( $(date +%s) - start )) s"
ls -l "build/out/$model"

echo "== training two $model layers (build/out/$model) for ${EPOCHS:-5} epochs"
.venv/bin/python examples/train.py --library "build/out/$model" --epochs "${EPOCHS:-5}"

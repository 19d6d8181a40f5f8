#!/usr/bin/env bash
# The main job: set up, build, compile a bundled model with hectorc, then
# train it a few epochs on a built-in synthetic graph (GPU if there is one,
# else CPU). Until the kernel emitters land, training runs on the IR
# interpreter (the same numbers the generated kernels will be checked
# against).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
scripts/build.sh

model="${1:-rgat}"
echo "== hectorc models/$model.hgnn -o build/out/$model"
build/bin/hectorc "models/$model.hgnn" -o "build/out/$model"
ls -l "build/out/$model"

echo "== training $model for a few epochs"
HECTOR_BUILD_DIR="$PWD/build" HECTORC="$PWD/build/bin/hectorc" \
  PYTHONPATH="$PWD/runtime/python" \
  .venv/bin/python examples/train.py --model "build/out/$model/$model.inter.ir" --epochs "${EPOCHS:-5}"

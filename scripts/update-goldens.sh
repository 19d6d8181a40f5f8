#!/usr/bin/env bash
# Regenerates the golden inter-op IR of the bundled models
# (tests/golden/<model>.inter.ir) with the hectorc in ${HECTOR_BUILD_DIR:-build}.
# Review the diff before committing: a golden change is a behaviour change.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="${HECTOR_BUILD_DIR:-build}"
cmake --build "$build_dir" --target hectorc
for model in models/rgcn.hgnn models/rgat.hgnn models/hgt.hgnn; do
  name="$(basename "$model" .hgnn)"
  "$build_dir/bin/hectorc" "$model" --emit=inter-ir > "tests/golden/$name.inter.ir"
  echo "updated tests/golden/$name.inter.ir"
done

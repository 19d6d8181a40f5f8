#!/usr/bin/env bash
# Regenerates the golden files of the bundled models with the hectorc in
# ${HECTOR_BUILD_DIR:-build}:
#   tests/golden/<model>.inter.ir   the frontend's inter-op IR (rgcn, rgat, hgt)
#   tests/golden/<model>.intra.ir   the intra-op IR after the whole pipeline
#   tests/golden/<model>.plan.json  the preprocessing plan (every model)
#   tests/golden/<model>_backward.{inter,intra}.ir  the autodiff output and
#                                   its lowering (every model)
#   tests/golden/<model>_inference.{inter,intra}.ir  the inference program
#                                   (the models that have one)
#   tests/golden/passes/<model>.<pass>.ir  the IR after each inter-op pass
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
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for model in models/*.hgnn; do
  name="$(basename "$model" .hgnn)"
  "$build_dir/bin/hectorc" "$model" --emit=intra-ir > "tests/golden/$name.intra.ir"
  "$build_dir/bin/hectorc" "$model" -o "$tmp/$name" 2>/dev/null
  cp "$tmp/$name/plan.json" "tests/golden/$name.plan.json"
  cp "$tmp/$name/${name}_backward.inter.ir" "$tmp/$name/${name}_backward.intra.ir" tests/golden/
  rm -f "tests/golden/${name}_inference.inter.ir" "tests/golden/${name}_inference.intra.ir"
  if [ -f "$tmp/$name/${name}_inference.inter.ir" ]; then
    cp "$tmp/$name/${name}_inference.inter.ir" "$tmp/$name/${name}_inference.intra.ir" tests/golden/
  fi
  echo "updated tests/golden/$name{.intra.ir,.plan.json,_backward.*}"
  mkdir -p tests/golden/passes
  for pass in verify infer-shapes reorder-linear compact-materialization \
              forward-broadcasts canonicalize-loops fuse-loops \
              uncompact-segment-sums uncompact-weighted-sums reassociate-bias; do
    "$build_dir/bin/hectorc" "$model" --emit=inter-ir --print-after=$pass \
      2> "tests/golden/passes/$name.$pass.ir" > /dev/null
  done
  echo "updated tests/golden/passes/$name.*.ir"
done

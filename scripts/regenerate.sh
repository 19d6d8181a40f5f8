#!/usr/bin/env bash
# Regenerates generated/<model>/ from models/<model>.hgnn with hectorc.
# Usage: scripts/regenerate.sh [OUTPUT_ROOT]   (default: generated)
# The test `generated_is_fresh` runs this into a temporary folder and fails
# when the committed generated/ differs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out_root="${1:-$root/generated}"
hectorc="${HECTORC:-$root/build/bin/hectorc}"

for model in "$root"/models/*.hgnn; do
  name="$(basename "$model" .hgnn)"
  rm -rf "$out_root/$name"
  mkdir -p "$out_root/$name"
  # Relative paths keep the output independent of where the repo lives.
  (cd "$root" && "$hectorc" "models/$name.hgnn" -o "$out_root/$name")
done
# The benchmark's optimisation variants are hectorc output too.
if [ -z "${1:-}" ]; then
  "$root/scripts/bench-variants.sh"
fi

#!/usr/bin/env bash
# Fails when generated/ is not exactly what hectorc produces today for
# models/*.hgnn (generated code is regenerated, never hand-edited).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$root/scripts/regenerate.sh" "$tmp"
status=0
for dir in "$tmp"/*/; do
  name="$(basename "$dir")"
  if ! diff -r "$dir" "$root/generated/$name" >"$tmp/$name.diff"; then
    echo "generated/$name is stale: run scripts/regenerate.sh and commit" >&2
    head -n 40 "$tmp/$name.diff" >&2
    status=1
  fi
done
for dir in "$root"/generated/*/; do
  name="$(basename "$dir")"
  if [ ! -d "$tmp/$name" ]; then
    echo "generated/$name has no models/$name.hgnn: remove it" >&2
    status=1
  fi
done
[ $status = 0 ] && echo "generated/ is fresh"
exit $status

#!/usr/bin/env bash
# Builds the frontend fuzzer in build-fuzz/ (clang, ASan + libFuzzer) and
# runs it for ${FUZZ_SECONDS:-60} seconds on a seed corpus of models/*.hgnn
# and tests/diagnostics/*.hgnn. Fails (non-zero) on any crash, leak or
# timeout; crash inputs are left in build-fuzz/fuzz-artifacts/. Ends with
# libFuzzer's final stats line.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="${HECTOR_FUZZ_BUILD_DIR:-build-fuzz}"
seconds="${FUZZ_SECONDS:-60}"
jobs="${HECTOR_JOBS:-$(nproc)}"

CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address" \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address" \
  -DHECTOR_BUILD_FUZZER=ON -DHECTOR_WITH_TORCH=OFF -DHECTOR_WITH_CUDA=OFF \
  >/dev/null
cmake --build "$build_dir" --target fuzz_frontend -j "$jobs"

corpus="$(mktemp -d)"
trap 'rm -rf "$corpus"' EXIT
cp models/*.hgnn tests/diagnostics/*.hgnn "$corpus"/
if compgen -G "tests/fuzz/regressions/*" >/dev/null; then
  cp tests/fuzz/regressions/* "$corpus"/ 2>/dev/null || true
fi
artifacts="$build_dir/fuzz-artifacts"
mkdir -p "$artifacts"

log="$build_dir/fuzz.log"
status=0
"$build_dir/bin/fuzz_frontend" "$corpus" \
  -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1 || status=$?
if [ "$status" -ne 0 ]; then
  tail -n 60 "$log"
  echo "fuzz-smoke: FAILED (exit $status); reproducers in $artifacts/"
  exit "$status"
fi
grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)' "$log" || true
grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -n 1
echo "fuzz-smoke: OK (${seconds}s, no crash, leak or timeout)"

#!/usr/bin/env bash
# Sets up, builds and runs every test: the GoogleTest suites through ctest,
# the frontend fuzz smoke run (60 s), then pytest. The output ends with the
# runners' own summary lines.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
scripts/build.sh

status=0
(cd build && ctest --output-on-failure -j "$(nproc)") || status=1
FUZZ_SECONDS="${FUZZ_SECONDS:-60}" scripts/fuzz-smoke.sh || status=1
HECTOR_BUILD_DIR="$PWD/build" HECTORC="$PWD/build/bin/hectorc" \
  PYTHONPATH="$PWD/runtime/python" \
  .venv/bin/python -m pytest tests/python -q -ra || status=1
exit $status

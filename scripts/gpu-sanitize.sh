#!/usr/bin/env bash
# On a GPU machine, after scripts/gpu-check.sh built build-gpu/ (or with
# HECTOR_BUILD_DIR naming another CUDA build, e.g. build-bench/): runs the
# CUDA cases of the generated-kernel, deterministic-mode and bad-input tests
# under compute-sanitizer's memcheck, racecheck and initcheck, each of which
# must report nothing. Logs go to $OUT when set.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-build-gpu/logs}"
mkdir -p "$out"
python="${HECTOR_PYTHON:-$(command -v python3)}"
sanitizer="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
export HECTOR_BUILD_DIR="${HECTOR_BUILD_DIR:-$PWD/build-gpu}" PYTHONPATH="$PWD/runtime/python"
status=0
for tool in memcheck racecheck initcheck; do
  log="$out/sanitize-$tool.log"
  "$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 50 \
    "$python" -m pytest -q -p no:cacheprovider tests/python/test_generated.py \
    tests/python/test_deterministic.py tests/python/test_bad_input.py \
    -k "cuda and not gradcheck" >"$log" 2>&1
  rc=$?
  summary="$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)"
  echo "$tool: exit $rc; ${summary:-no summary}; $(grep -E '[0-9]+ passed' "$log" | tail -1)" | tee -a "$out/sanitize.txt"
  [ $rc = 0 ] || status=1
done
exit $status

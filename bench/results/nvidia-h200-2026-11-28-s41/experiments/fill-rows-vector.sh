#!/usr/bin/env bash
# For the next session's first device call (not run in session 41): the
# bias fill a 16-byte word a thread (experiments/fill-rows-vector.diff,
# perf-notes section 96). Apply the diff to main (git apply), copy this
# script into the session's scripts/ and run it there. Checks: the PTX
# guards, templates_tests' FillRows cases, memcheck on them and on the
# generated RGAT-PyG cases; speed: RGAT inference and training on am, mag
# and wikikg2 against main (`old`, .devcmd/old from `git archive`), three
# interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=10 gpu_build new . tests &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
wait
(cd build-new && ctest -R stores_are_vectors --output-on-failure) > $R/ptx-guard.log 2>&1
echo "ptx guards rc=$? $(grep -E 'tests passed' $R/ptx-guard.log) $(gpu_elapsed)"
gpu_gtests new templates 'FillRows*'
gpu_gtests new san-memcheck-fill 'FillRows*' memcheck 60
S=/usr/local/cuda/bin/compute-sanitizer; command -v compute-sanitizer >/dev/null && S=compute-sanitizer
gpu_with new timeout 90 $S --tool memcheck --error-exitcode 99 python3 -m pytest \
  tests/python/test_generated.py -q -x -k "cuda and rgat_pyg and declared_hypers" \
  > $R/san-memcheck-py.log 2>&1
echo "memcheck py rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-py.log | tail -1) $(tail -1 $R/san-memcheck-py.log) $(gpu_elapsed)"
gpu_with new timeout 120 python3 -m pytest -q -k "cuda and rgat" \
  tests/python/test_generated.py tests/python/test_nn.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
GPU_TP_DEADLINE=500 GPU_TP_TIMEOUT=100 gpu_throughput_ab old new 3 --tf32 \
  --datasets am,mag,wikikg2 --models rgat --modes inference,training
echo "done $(gpu_elapsed)"

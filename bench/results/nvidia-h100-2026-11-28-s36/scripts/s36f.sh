#!/usr/bin/env bash
# Session 36 call f: the tests refactored after call c (test_launch_graphs
# through test_replay's shared training loop; LaunchGraphCacheTest's
# stream holder) run again on a GPU.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start f
GPU_BUILD_JOBS=16 gpu_build new . tests
timeout 60 ./build-new/bin/templates_tests \
  --gtest_filter='LaunchGraph*:LaunchKey*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
gpu_with new timeout 120 python3 -m pytest -q -p no:cacheprovider \
  tests/python/test_launch_graphs.py tests/python/test_replay.py \
  > $R/pytest-graphs.log 2>&1
echo "pytest graphs rc=$? $(tail -1 $R/pytest-graphs.log) $(gpu_elapsed)"
grep -E "^FAILED|^E " $R/pytest-graphs.log | head -20
echo "done $(gpu_elapsed)"

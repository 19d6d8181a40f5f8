#!/usr/bin/env bash
# Session 36 call c: the launch graph cache (templates/LaunchGraphCache.h:
# a generated CUDA host function's launches replayed from a CUDA graph
# when a call repeats an earlier call's arguments). Correctness: its
# template tests, the new test_launch_graphs.py, test_replay.py and the
# whole CUDA pytest, memcheck on the new tests. Speed, against main
# 470b8a5 (`old`, .devcmd/old) on one machine: host_split and op_host.py
# on the small graphs, then two interleaved throughput rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
GPU_BUILD_JOBS=10 gpu_build new . tests &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
wait
timeout 60 ./build-new/bin/templates_tests \
  --gtest_filter='LaunchGraph*:LaunchKey*:ZeroFill*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED|Failure" -A3 $R/templates.log | head -20
gpu_with new timeout 150 python3 -m pytest -q -p no:cacheprovider \
  tests/python/test_launch_graphs.py tests/python/test_replay.py \
  > $R/pytest-graphs.log 2>&1
echo "pytest graphs rc=$? $(tail -1 $R/pytest-graphs.log) $(gpu_elapsed)"
grep -E "^FAILED|^E " $R/pytest-graphs.log | head -20
gpu_with new timeout 150 python3 -m pytest -q -p no:cacheprovider \
  tests/python -k cuda > $R/pytest.log 2>&1
echo "pytest cuda rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED" $R/pytest.log | head -20
split() {
  gpu_with "$1" timeout 100 python3 -m hector.bench.host_split --tf32 \
    --datasets aifb,mutag,bgs,fb15k --models rgat,rgcn,hgt \
    --modes training --steps 200 --warmup 20 2>&1 | grep -v Warning
}
echo "== host_split old"; split old | tee $R/split-old.txt
echo "== host_split new"; split new | tee $R/split-new.txt
echo "== op_host new"
gpu_with new timeout 60 python3 \
  bench/results/nvidia-h100-2026-11-28-s36/scripts/op_host.py aifb mutag \
  2>&1 | grep -v Warning
GPU_TP_DEADLINE=470 gpu_throughput_ab old new 2 --tf32 \
  --datasets aifb,mutag,bgs,fb15k --models rgat,rgcn,hgt \
  --modes training,inference
gpu_with new timeout 90 compute-sanitizer --tool memcheck --error-exitcode 99 \
  python3 -m pytest -q -p no:cacheprovider tests/python/test_launch_graphs.py \
  -k "rgat_pyg and (plain or hubs)" > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(tail -1 $R/san-memcheck.log) $(gpu_elapsed)"
echo "done $(gpu_elapsed)"

# Sourced by the scripts a session runs on the GPU machine (the device
# tool): the steps every one of them repeated, in one place.
#
#   source bench/gpu-session.sh
#   gpu_session_start a            # $OUT/r, tarred to $OUT/a.tgz on exit
#   gpu_build new . tests &        # build-new from this tree, with tests
#   gpu_build old .devcmd/old &    # build-old from an older tree's copy
#   wait
#   gpu_with new python3 -m pytest tests/python -q -k cuda
#   gpu_gtests new templates 'SegmentGemmCuda.Dense*'
#   gpu_gtests new san-memcheck-gemm 'SegmentGemmCuda.Dense*' memcheck 60
#   gpu_pytest_memcheck new san-memcheck-py 'cuda and rgat_pyg'
#   gpu_ncu_step new ncu-dots linearDot 4 wikikg2 rgat
#   gpu_throughput_ab old new 2 --datasets am,mag --models rgat \
#       --modes inference,training
#   gpu_throughput_env_ab new HECTOR_GEMM_DOT64 general=0 lean=1 3 \
#       --datasets wikikg2 --models rgat --modes inference
#   gpu_build_target r4 . bench_summed_rows -DHECTOR_SUM_RING_BATCH=4
#   gpu_issue9_run new             # after a build with the bench variants
#
# gpu_with runs a command against one build with that build's own Python
# package (PYTHONPATH=<its tree>/runtime/python), so that an older
# library is never driven by a newer package. Needs bash; the functions
# log under $R and print one line of progress each.

# Makes $R (= $OUT/r), tars it to $OUT/NAME.tgz on exit, sets up the
# machine's compilers and torch (scripts/gpu-env.sh) and records the GPU.
gpu_session_start() {
  local name="$1"
  R="$OUT/r"
  mkdir -p "$R"
  # shellcheck disable=SC2064 # expand $OUT and $name now
  trap "tar czf '$OUT/$name.tgz' -C '$OUT' r" EXIT
  # shellcheck source=scripts/gpu-env.sh
  source scripts/gpu-env.sh
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader \
    > "$R/gpu.txt"
  cat "$R/gpu.txt"
  GPU_T0=$(date +%s)
}

# Seconds since gpu_session_start.
gpu_elapsed() { echo "$(($(date +%s) - GPU_T0)) s"; }

# gpu_build TAG [TREE] [tests]: configures and builds TREE (default: this
# one) into build-TAG without the compiler; with `tests`, the C++ tests
# too (templates_tests and the rest), else only the runtime and the
# bundled libraries. GPU_BUILD_TARGET=NAME builds that target alone (say
# templates_tests, a third of a full build's time). Log: $R/build-TAG.log.
# Run several with & and wait:
# the tree is recorded in build-TAG/hector-tree (for gpu_with), not in a
# variable that a background job would keep to itself.
gpu_build() {
  local tag="$1" tree="${2:-.}" tests="${3:-}"
  mkdir -p "build-$tag"
  echo "$tree" > "build-$tag/hector-tree"
  local log="$R/build-$tag.log" rc
  {
    cmake -S "$tree" -B "build-$tag" -G Ninja -DHECTOR_BUILD_COMPILER=OFF \
      -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON \
      -DHECTOR_BUILD_TESTS="$([ "$tests" = tests ] && echo ON || echo OFF)" \
      "${hector_gpu_cmake_args[@]}" &&
      cmake --build "build-$tag" -j "${GPU_BUILD_JOBS:-8}" \
        ${GPU_BUILD_TARGET:+--target "$GPU_BUILD_TARGET"}
  } > "$log" 2>&1
  rc=$?
  echo "build $tag ($tree${GPU_BUILD_TARGET:+, $GPU_BUILD_TARGET}) rc=$rc $(gpu_elapsed)"
  [ $rc -eq 0 ] || grep -m5 -B2 -A8 "error" "$log"
  return $rc
}

# gpu_with TAG CMD...: CMD with build-TAG's library and its tree's Python
# package.
gpu_with() {
  local tag="$1" tree=.
  shift
  [ -f "build-$tag/hector-tree" ] && tree=$(cat "build-$tag/hector-tree")
  PYTHONPATH="$PWD/$tree/runtime/python" HECTOR_BUILD_DIR="$PWD/build-$tag" \
    "$@"
}

# gpu_gtests TAG NAME FILTER [memcheck] [LIMIT]: build-TAG's templates_tests
# on the cases FILTER names (a --gtest_filter), log $R/NAME.log, within
# LIMIT seconds (default 120); with `memcheck`, under compute-sanitizer's
# memcheck (errors fail the run). Prints one line: the pass/fail summary
# (or the sanitizer's), and the first failures. Every session's scripts
# wrote these lines out by hand.
gpu_gtests() {
  local tag="$1" name="$2" filter="$3" tool="${4:-}" limit="${5:-120}" rc
  local -a run=()
  if [ "$tool" = memcheck ]; then
    run=("$(gpu_cuda_tool compute-sanitizer /usr/local/cuda/bin)" --tool
      memcheck --error-exitcode 99)
  fi
  timeout "$limit" "${run[@]}" "./build-$tag/bin/templates_tests" \
    --gtest_filter="$filter" > "$R/$name.log" 2>&1
  rc=$?
  echo "$name rc=$rc $(grep -E '^\[  PASSED|^\[  FAILED|ERROR SUMMARY' \
    "$R/$name.log" | head -3 | tr '\n' ' ')$(gpu_elapsed)"
  grep -E "^\[  FAILED|Failure" -A3 "$R/$name.log" | head -20
  return $rc
}

# The compute-sanitizer (or Nsight Compute) of the machine: on PATH, else
# the CUDA toolkit's.
gpu_cuda_tool() {
  local name="$1" dir="$2"
  if command -v "$name" >/dev/null; then echo "$name"; else echo "$dir/$name"; fi
}

# gpu_pytest_memcheck TAG NAME KEXPR [LIMIT]: the generated layers' pytest
# cases that `-k KEXPR` picks (tests/python/test_generated.py) under
# compute-sanitizer's memcheck with build-TAG, stopping at the first
# failure, log $R/NAME.log, within LIMIT seconds (default 90). Prints one
# line: the last error summary and pytest's summary.
gpu_pytest_memcheck() {
  local tag="$1" name="$2" kexpr="$3" limit="${4:-90}" rc s
  s=$(gpu_cuda_tool compute-sanitizer /usr/local/cuda/bin)
  gpu_with "$tag" timeout "$limit" "$s" --tool memcheck --error-exitcode 99 \
    python3 -m pytest tests/python/test_generated.py -q -x -k "$kexpr" \
    > "$R/$name.log" 2>&1
  rc=$?
  echo "$name rc=$rc $(grep -E 'ERROR SUMMARY' "$R/$name.log" | tail -1) \
$(tail -1 "$R/$name.log") $(gpu_elapsed)"
  return $rc
}

# gpu_ncu_step TAG NAME KERNELS COUNT DATASET MODEL [LIMIT]: Nsight Compute
# (speed of light, memory, occupancy, warp states) on the first COUNT
# launches of the kernels whose names match the regex KERNELS in one
# hector-cr inference step (hector.bench.profile, --tf32) of MODEL on
# DATASET with build-TAG, log $R/NAME.txt, within LIMIT seconds (default
# 100). Always give a kernel filter: without one, Nsight Compute profiles
# the bench's graph preparation (session 41, call b). Prints each launch's
# name, time, throughput and hit rates.
gpu_ncu_step() {
  local tag="$1" name="$2" kernels="$3" count="$4" dataset="$5" model="$6"
  local limit="${7:-100}" rc n
  n=$(gpu_cuda_tool ncu /usr/local/cuda/bin)
  gpu_with "$tag" timeout "$limit" "$n" --clock-control none \
    -k "regex:$kernels" -c "$count" --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section Occupancy \
    --section WarpStateStats python3 -m hector.bench.profile --tf32 \
    --datasets "$dataset" --models "$model" --systems hector-cr \
    --modes inference --steps 1 --warmup 0 --rows 4 \
    --out "$R/$name-profile" > "$R/$name.txt" 2>&1
  rc=$?
  echo "$name rc=$rc $(gpu_elapsed)"
  grep -E "^  [a-zA-Z_:<> ]*(void|Kernel)|^  void|Duration|DRAM Throughput|\
L2 Hit|L1/TEX Hit|Achieved Occupancy|Warp Cycles Per Issued" "$R/$name.txt" |
    cut -c1-150 | head -60
  return $rc
}

# _gpu_tp_run LABEL BUILD ROUND ENV ARGS...: one run of `python3 -m
# hector.bench.throughput ARGS` against build-BUILD with the environment
# assignment ENV (VAR=VALUE; empty: none), recorded as LABEL into
# $R/$GPU_TP_FILE (default tp.jsonl; errors in $R/tp.err) - unless it
# would start more than GPU_TP_DEADLINE seconds after gpu_session_start
# (unset: no limit), so that a call stops inside the device tool's limit
# with the rounds it finished.
_gpu_tp_run() {
  local label="$1" build="$2" round="$3" assignment="$4"
  shift 4
  if [ -n "${GPU_TP_DEADLINE:-}" ] &&
    [ $(($(date +%s) - GPU_T0)) -gt "$GPU_TP_DEADLINE" ]; then
    echo "throughput $label round $round skipped $(gpu_elapsed)"
    return
  fi
  (
    # shellcheck disable=SC2163 # export the assignment itself
    [ -n "$assignment" ] && export "$assignment"
    gpu_with "$build" timeout "${GPU_TP_TIMEOUT:-120}" python3 -m \
      hector.bench.throughput "$@" --tag "$label" \
      >> "$R/${GPU_TP_FILE:-tp.jsonl}" 2>> "$R/tp.err"
  )
  echo "throughput $label round $round rc=$? $(gpu_elapsed)"
}

# gpu_throughput_ab BASE NEW ROUNDS ARGS...: ROUNDS interleaved rounds of
# `python3 -m hector.bench.throughput ARGS`, build BASE then build NEW
# each round (_gpu_tp_run), then the comparison against BASE (each
# case's best round).
gpu_throughput_ab() {
  local base="$1" new="$2" rounds="$3" round tag
  shift 3
  for ((round = 1; round <= rounds; ++round)); do
    for tag in "$base" "$new"; do
      _gpu_tp_run "$tag" "$tag" "$round" "" "$@"
    done
  done
  gpu_with "$new" python3 -m hector.bench.compare \
    "$R/${GPU_TP_FILE:-tp.jsonl}" --baseline "$base"
}

# gpu_throughput_env_ab BUILD VAR BASE=VALUE NEW=VALUE ROUNDS ARGS...: as
# gpu_throughput_ab, but one build twice, with the environment variable
# VAR set to each VALUE, recorded as BASE and NEW (a run-time switch such
# as HECTOR_GEMM_DOT64 or HECTOR_NODE_ROW_LANES; an empty VALUE sets VAR
# empty).
gpu_throughput_env_ab() {
  local build="$1" var="$2" base="$3" new="$4" rounds="$5" round side
  shift 5
  for ((round = 1; round <= rounds; ++round)); do
    for side in "$base" "$new"; do
      _gpu_tp_run "${side%%=*}" "$build" "$round" "$var=${side#*=}" "$@"
    done
  done
  gpu_with "$build" python3 -m hector.bench.compare \
    "$R/${GPU_TP_FILE:-tp.jsonl}" --baseline "${base%%=*}"
}

# gpu_build_target TAG TREE TARGET [CUDA_FLAGS]: configures TREE into
# build-TAG with the templates only (no torch, no generated layers, no
# tests) and builds TARGET (a bench/gemm program such as
# bench_summed_rows), with CMAKE_CUDA_FLAGS when given (a template's
# compile-time knob). Log: $R/build-TAG.log. Session 33's scripts each
# defined this as bench_only.
gpu_build_target() {
  local tag="$1" tree="$2" target="$3" flags="${4:-}" rc
  {
    cmake -S "$tree" -B "build-$tag" -G Ninja -DHECTOR_BUILD_COMPILER=OFF \
      -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=OFF -DHECTOR_BUILD_TESTS=OFF \
      -DHECTOR_BUILD_GENERATED=OFF "-DCMAKE_CUDA_FLAGS=$flags" \
      "${hector_gpu_cmake_args[@]}" &&
      cmake --build "build-$tag" -j "${GPU_BUILD_JOBS:-4}" --target "$target"
  } > "$R/build-$tag.log" 2>&1
  rc=$?
  echo "build $tag ($tree, $target${flags:+, $flags}) rc=$rc $(gpu_elapsed)"
  return $rc
}

# gpu_issue9_run TAG [TIMEOUT]: issue 9's run with build-TAG (built with
# -DHECTOR_BUILD_BENCH_VARIANTS=ON): every Hector system and every
# baseline but pyg-hgt-compile (whose records come from session 22's run,
# merged later), --tf32, all 8 datasets, into $R/harness (log
# $R/harness.log); prints the record count and the geometric means.
gpu_issue9_run() {
  local tag="$1" limit="${2:-400}"
  gpu_with "$tag" timeout "$limit" python3 -m hector.bench --tf32 \
    --systems pyg-rgcn,pyg-fastrgcn,segmm-rgcn,pyg-rgat,pyg-rgat-compile,pyg-hgt,hector,hector-u,hector-c,hector-r,hector-cr \
    --models rgcn,rgat,hgt --case-timeout 20 --prepare-timeout 200 \
    --no-chart --out "$R/harness" > "$R/harness.log" 2>&1
  echo "harness rc=$? $(grep -c '^\[' "$R/harness.log") records $(gpu_elapsed)"
  grep -E 'Geometric' "$R/harness/table.md" | head -8
}

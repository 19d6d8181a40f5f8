#!/usr/bin/env bash
# On a GPU machine: builds the bundled *_pyg libraries (one build per TAG,
# with CMAKE_CUDA_FLAGS from PROBE_FLAGS_<TAG> when set, from the source
# tree PROBE_SOURCE_<TAG> when set: e.g. a copy of this one whose
# generated/ is an older commit's), then for each
#   - times the forward on the synthetic graphs and on their hub-free twins
#     (python -m hector.bench.degree_probe, arguments from PROBE_ARGS),
#   - when NCU_KERNEL is set (a regex of kernel names), reads Nsight
#     Compute's counters of that kernel's first launch on the first dataset
#     (each launch-skip in NCU_SKIP, default 0).
# Usage: bench/kernel-probe.sh TAG...   (output on stdout and under $OUT)
set -uo pipefail
cd "$(dirname "$0")/.."
python=python3
out="${OUT:-/tmp}"
for tag in "$@"; do
  flags_var="PROBE_FLAGS_$tag" source_var="PROBE_SOURCE_$tag"
  bench/build-variant.sh "probe-$tag" "${!flags_var:-}" "${!source_var:-.}"
done
for tag in "$@"; do
  echo "=== $tag"
  export HECTOR_BUILD_DIR=$PWD/build-probe-$tag PYTHONPATH=$PWD/runtime/python
  # shellcheck disable=SC2086
  $python -m hector.bench.degree_probe ${PROBE_ARGS:-} 2>&1 | tee "$out/probe-$tag.txt"
  for skip in ${NCU_KERNEL:+${NCU_SKIP:-0}}; do
    echo "--- ncu $NCU_KERNEL launch $skip"
    ncu --clock-control none --kernel-name "regex:$NCU_KERNEL" \
      --launch-skip "$skip" --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section WarpStateStats --section SchedulerStats \
      --section MemoryWorkloadAnalysis \
      $python -m hector.bench.degree_probe ${PROBE_ARGS:-} --repeats 1 \
      > "$out/ncu-$tag-$skip.txt" 2>&1
    grep -E "Duration|Throughput|Occupancy|Registers|Block Size|Grid Size|Stall|Warp Cycles|Eligible|Issued|Hit Rate|Waves" "$out/ncu-$tag-$skip.txt" | head -40
  done
done

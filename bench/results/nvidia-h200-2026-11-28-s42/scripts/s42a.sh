#!/usr/bin/env bash
# Session 42 call a (session 41's experiments/fill-rows-vector.sh): the
# bias fill a 16-byte word a thread (experiments/fill-rows-vector.diff,
# perf-notes section 96). Apply the diff to main (git apply), copy this
# script into the session's scripts/ and run it there. Checks: the PTX
# guards, templates_tests' FillRows cases, memcheck on them and on the
# generated RGAT-PyG cases; speed: RGAT inference and training on am, mag
# and wikikg2 against main (`old`, .devcmd/old from `git archive`), three
# interleaved rounds. Before the speed rounds: Nsight Compute on the
# RGAT score dots (linearDotKernel) of one wikikg2 and one am inference
# step, for the node-major dot question (stall reasons, occupancy, L2).
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
N=ncu; command -v ncu >/dev/null || N=/usr/local/cuda/bin/ncu
for d in wikikg2 am; do
  gpu_with new timeout 100 $N --clock-control none -k regex:linearDot \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section WarpStateStats --section LaunchStats -c 4 \
    python3 -m hector.bench.profile --tf32 --datasets $d --models rgat \
    --systems hector-cr --modes inference --steps 1 --warmup 0 --rows 4 \
    --out $R/ncu-profile-$d > $R/ncu-dots-$d.txt 2>&1
  echo "ncu $d rc=$? $(gpu_elapsed)"
  grep -E "^  [a-zA-Z_:<> ]*(void|Kernel)|^  void|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|L2 Hit|L1/TEX Hit|Registers Per|Grid Size|Stall|Warp Cycles Per Issued" $R/ncu-dots-$d.txt | cut -c1-150 | head -60
done
GPU_TP_DEADLINE=470 GPU_TP_TIMEOUT=100 gpu_throughput_ab old new 3 --tf32 \
  --datasets am,mag,wikikg2 --models rgat --modes inference,training
echo "done $(gpu_elapsed)"

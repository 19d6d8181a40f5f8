#!/usr/bin/env bash
# Session 28 call a: weighted summed rows (SegmentGemmArgs::sumWeights) and
# the summed kernel's balanced ranges chosen in the kernel (no sumRowCost
# argument). templates_tests' CUDA cases; memcheck, racecheck and
# initcheck on the weighted cases; CUDA pytest's RGCN cases (the bundled
# summed GEMMs); bench_summed_rows on am, mag and wikikg2 (cap 32), main
# before the change (.devcmd/old, root and summed) against this tree (root,
# summed, weighted, and RGAT's source score a pair).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=12 gpu_build new . tests &
(cmake -S .devcmd/old -B build-old -G Ninja -DHECTOR_BUILD_COMPILER=OFF \
   -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON -DHECTOR_BUILD_TESTS=OFF \
   -DHECTOR_BUILD_GENERATED=OFF > $R/build-old.log 2>&1 &&
 cmake --build build-old -j 4 --target bench_summed_rows >> $R/build-old.log 2>&1
 echo "build old bench rc=$? $(gpu_elapsed)") &
wait
./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED" $R/templates.log | head
for tool in memcheck racecheck initcheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/weighted*:Table/SegmentGemm.DeterministicIsBitwiseRepeatableCuda/weighted*' > $R/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $R/san-$tool.log | tail -1) $(gpu_elapsed)"
done
for ds in am mag wikikg2; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > /dev/null 2>&1
  for tag in old new old new; do
    timeout 90 ./build-$tag/bin/bench_summed_rows /tmp/$ds.bin 64 32 0 2>&1 | grep -E "^cap|^pairs" | sed -E "s/^/$tag $ds /; s/ +/ /g" >> $R/summed.txt
  done
  echo "== $ds $(gpu_elapsed)"; grep " $ds " $R/summed.txt
done
gpu_with new timeout 240 python3 -m pytest -q -p no:cacheprovider tests/python -k "cuda and rgcn" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
echo "done $(gpu_elapsed)"

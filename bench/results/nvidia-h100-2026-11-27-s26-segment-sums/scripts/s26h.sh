#!/usr/bin/env bash
# Session 26 call h: branch mma-fixed-k (the tensor-core linear kernel
# instantiated for K = 64, its K loops unrolled; not for summed rows)
# against main (c591457, .devcmd/old): templates_tests' CUDA cases and
# memcheck on the linear mma cases, bench_summed_rows (root GEMM with bias,
# summed GEMM) on am, mag, wikikg2 for both, and the harness's inference
# of every model on am for both.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start h
GPU_BUILD_JOBS=11 gpu_build new . tests &
GPU_BUILD_JOBS=5 gpu_build old .devcmd/old &
wait
./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/*' > $R/san-memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck.log | tail -1) $(gpu_elapsed)"
for ds in am mag wikikg2; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > /dev/null 2>&1
  for tag in old new new old; do
    timeout 60 ./build-$tag/bin/bench_summed_rows /tmp/$ds.bin 64 32 0 >> $R/summed-$tag-$ds.txt 2>&1
  done
  echo "== $ds $(gpu_elapsed)"; for tag in old new; do grep -h "^cap" $R/summed-$tag-$ds.txt | sed -E "s/^/$tag /; s/ +/ /g" | cut -c1-150; done
done
for tag in old new; do
  gpu_with $tag timeout 80 python3 -m hector.bench --tf32 --systems hector --models rgcn,rgat,hgt --modes inference --datasets am --no-chart --out $R/harness-$tag > $R/harness-$tag.log 2>&1
  echo "harness $tag rc=$? $(gpu_elapsed)"; grep -E "ms  floor" $R/harness-$tag.log | sed -E 's/ +/ /g'
done
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 28 call b: RGAT's forward as aggregate-then-transform
# (bench_attention_sums, a prototype of the lowering: scores per pair and
# per chunk, the softmax per entry, weighted summed rows) on aifb, am, mag
# and wikikg2, with its error against the model's definition; the bundled
# RGAT (hector-cr) timed by hector.bench on am, mag and wikikg2 on the same
# machine; and bench_summed_rows from main before this session
# (.devcmd/old, templates only) against this tree, interleaved.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
GPU_BUILD_JOBS=12 gpu_build new . &
(cmake -S .devcmd/old -B build-old -G Ninja -DHECTOR_BUILD_COMPILER=OFF \
   -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=OFF -DHECTOR_BUILD_TESTS=OFF \
   -DHECTOR_BUILD_GENERATED=OFF "${hector_gpu_cmake_args[@]}" > $R/build-old.log 2>&1 &&
 cmake --build build-old -j 4 --target bench_summed_rows >> $R/build-old.log 2>&1
 echo "build old bench rc=$? $(gpu_elapsed)") &
wait
for ds in aifb am mag wikikg2; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > /dev/null 2>&1
  timeout 120 ./build-new/bin/bench_attention_sums /tmp/$ds.bin 32 > $R/attention-$ds.txt 2>&1
  echo "== $ds rc=$? $(gpu_elapsed)"; cat $R/attention-$ds.txt
done
for ds in am mag wikikg2; do
  for tag in old new old new; do
    timeout 90 ./build-$tag/bin/bench_summed_rows /tmp/$ds.bin 64 32 0 2>&1 | grep -E "^cap" | sed -E "s/^/$tag $ds /; s/ +/ /g" | cut -c1-150 >> $R/summed.txt
  done
done
echo "== summed $(gpu_elapsed)"; cat $R/summed.txt
gpu_with new timeout 240 python3 -m hector.bench --tf32 --datasets am,mag,wikikg2 --models rgat --modes inference --systems hector-cr --out $R/bench --no-chart > $R/bench.log 2>&1
echo "bench rc=$? $(gpu_elapsed)"; grep -E "^\[" $R/bench.log
echo "done $(gpu_elapsed)"

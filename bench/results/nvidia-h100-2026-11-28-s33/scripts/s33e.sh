#!/usr/bin/env bash
# Session 33 call e: unweighted summed rows copied into a shared-memory
# ring with cp.async (HECTOR_SUM_RING_BATCH entries a batch, two batches in
# flight) against main f8c86be (.devcmd/old, rows loaded into registers):
# bench_summed_rows on am, mag and wikikg2 (cap 32), batches of 4 (four
# blocks a multiprocessor), 6 and 8 (three), interleaved twice.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start e
bench_only() { # TAG TREE [CUDA_FLAGS]: the templates and bench_summed_rows
  cmake -S "$2" -B "build-$1" -G Ninja -DHECTOR_BUILD_COMPILER=OFF \
    -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=OFF -DHECTOR_BUILD_TESTS=OFF \
    -DHECTOR_BUILD_GENERATED=OFF "-DCMAKE_CUDA_FLAGS=${3:-}" \
    "${hector_gpu_cmake_args[@]}" > $R/build-$1.log 2>&1 &&
    cmake --build "build-$1" -j 4 --target bench_summed_rows >> $R/build-$1.log 2>&1
  echo "build $1 rc=$? $(gpu_elapsed)"
}
bench_only old .devcmd/old &
bench_only r4 . -DHECTOR_SUM_RING_BATCH=4 &
bench_only r6 . -DHECTOR_SUM_RING_BATCH=6 &
bench_only r8 . -DHECTOR_SUM_RING_BATCH=8 &
(for ds in am mag wikikg2; do
  gpu_with old python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin
done) > $R/dump.log 2>&1 &
wait
ls -la /tmp/*.bin | wc -l
for round in 1 2; do
  for ds in am mag wikikg2; do
    for tag in old r4 r6 r8; do
      timeout 60 ./build-$tag/bin/bench_summed_rows /tmp/$ds.bin 64 32 0 2>&1 | grep -E "^cap" | sed -E "s/^/$tag $ds /; s/ +/ /g" | cut -c1-220 >> $R/summed.txt
    done
  done
  echo "round $round $(gpu_elapsed)"
done
cat $R/summed.txt
echo "done $(gpu_elapsed)"

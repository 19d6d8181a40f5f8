#!/usr/bin/env bash
# Session 33 call f: (1) quad stores in the linear kernel's epilogue
# (HECTOR_GEMM_QUAD_STORES, this tree) against pair stores (the same tree
# with it off): bench_summed_rows on am, mag and wikikg2, interleaved
# twice. (2) This tree (the leaner staging, the cp.async ring, quad
# stores) against main cc71e44 (.devcmd/old, before this session):
# hector.bench.throughput, RGCN, RGAT and HGT inference and training on
# am, mag, wikikg2 and biokg, two interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start f
bench_only() { # TAG TREE [CUDA_FLAGS]: the templates and bench_summed_rows
  cmake -S "$2" -B "build-$1" -G Ninja -DHECTOR_BUILD_COMPILER=OFF \
    -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=OFF -DHECTOR_BUILD_TESTS=OFF \
    -DHECTOR_BUILD_GENERATED=OFF "-DCMAKE_CUDA_FLAGS=${3:-}" \
    "${hector_gpu_cmake_args[@]}" > $R/build-$1.log 2>&1 &&
    cmake --build "build-$1" -j 3 --target bench_summed_rows >> $R/build-$1.log 2>&1
  echo "build $1 rc=$? $(gpu_elapsed)"
}
bench_only pairs . -DHECTOR_GEMM_QUAD_STORES=0 &
bench_only quads . &
GPU_BUILD_JOBS=5 gpu_build old .devcmd/old &
GPU_BUILD_JOBS=5 gpu_build new . &
(for ds in am mag wikikg2; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin
done) > $R/dump.log 2>&1 &
wait
for round in 1 2; do
  for ds in am mag wikikg2; do
    for tag in pairs quads; do
      timeout 60 ./build-$tag/bin/bench_summed_rows /tmp/$ds.bin 64 32 0 2>&1 | grep -E "^cap" | sed -E "s/^/$tag $ds /; s/ +/ /g" | cut -c1-220 >> $R/summed.txt
    done
  done
  echo "round $round $(gpu_elapsed)"
done
cat $R/summed.txt
GPU_TP_DEADLINE=480 gpu_throughput_ab old new 2 --tf32 \
  --datasets am,mag,wikikg2,biokg --models rgcn,rgat,hgt \
  --modes inference,training
echo "done $(gpu_elapsed)"

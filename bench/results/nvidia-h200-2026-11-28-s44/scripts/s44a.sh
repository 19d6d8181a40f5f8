#!/usr/bin/env bash
# Session 44, call a: main 13d66a6 with session 43's two experiments
# applied (experiments/sum-lanes8.diff and hgt-narrow-groups.diff of
# bench/results/nvidia-h200-2026-11-28-s43). Builds: `new` (the summed
# GEMM in 8-lane groups; tests and the bench variants, so that calls b
# and c reuse it on a warm machine) and `l16` (HECTOR_SUM_LANES=16:
# main's summed GEMM), plus bench_summed_rows both ways. Checks: the
# summed and weighted GEMM table cases, also under memcheck; the CUDA
# pytest cases of the generated models at their declared hypers; the
# CUDA HGT pytest cases; memcheck on the generated HGT-PyG cases. Speed:
# bench_summed_rows on mag, am and wikikg2, one round; RGCN, RGAT and HGT
# inference on am, mag and wikikg2, l16 against new, two rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
(
  hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
  GPU_BUILD_JOBS=8 gpu_build new . tests
) &
(
  hector_gpu_cmake_args+=("-DCMAKE_CUDA_FLAGS=-DHECTOR_SUM_LANES=16")
  GPU_BUILD_JOBS=4 gpu_build l16 .
) &
GPU_BUILD_JOBS=2 gpu_build_target sr8 . bench_summed_rows &
GPU_BUILD_JOBS=2 gpu_build_target sr16 . bench_summed_rows -DHECTOR_SUM_LANES=16 &
wait
for ds in mag am wikikg2; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin \
    > $R/dump-$ds.log 2>&1 &
done
F='*SegmentGemm.Cuda*/*ummed*:*SegmentGemm.Cuda*/*eighted*'
gpu_gtests new gemm "$F" "" 60
gpu_gtests new san-memcheck-gemm "$F" memcheck 60
gpu_with new timeout 60 python3 -m pytest -q -x -k "cuda and declared_hypers" \
  tests/python/test_generated.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_with new timeout 90 python3 -m pytest -q -k "cuda and (hgt or HGT)" \
  tests/python/test_generated.py tests/python/test_nn.py > $R/pytest-hgt.log 2>&1
echo "pytest-hgt rc=$? $(tail -1 $R/pytest-hgt.log) $(gpu_elapsed)"
gpu_pytest_memcheck new san-memcheck-py 'cuda and hgt_pyg and declared_hypers' 60
wait
for ds in mag am wikikg2; do
  for b in sr16 sr8; do
    timeout 30 ./build-$b/bin/bench_summed_rows /tmp/$ds.bin 64 64 0 2>&1 |
      grep -E "^cap" | sed -E "s/^/$ds $b /; s/ +/ /g" | tee -a $R/summed.txt
  done
done
GPU_TP_DEADLINE=500 GPU_TP_TIMEOUT=80 gpu_throughput_ab l16 new 2 --tf32 \
  --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference
echo "done $(gpu_elapsed)"

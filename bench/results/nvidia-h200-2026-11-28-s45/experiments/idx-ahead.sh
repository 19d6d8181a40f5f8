#!/usr/bin/env bash
# Prepared in session 45 for the next session's device time (not run):
# main with experiments/idx-ahead.diff applied (branch s45-idx-ahead) as
# `new`, main as `old` (.devcmd/main: git archive main | tar -x -C
# .devcmd/main), as session 45's call a (scripts/s45a.sh) measured the
# ring-ahead variant. Run it from here (or from a copy in the next
# session's scripts/: it finds the repository root four levels up).
# Checks: the summed and weighted GEMM table cases, also under memcheck;
# the CUDA pytest cases of the generated RGCN, RGAT and HGT layers;
# memcheck on the generated RGCN-PyG and RGAT-PyG cases. Speed:
# bench_summed_rows on mag, am and wikikg2; RGCN, RGAT and HGT inference
# on am, mag and wikikg2, old against new, two rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=8 gpu_build new . tests &
GPU_BUILD_JOBS=4 gpu_build old .devcmd/main &
GPU_BUILD_JOBS=2 gpu_build_target srnew . bench_summed_rows &
GPU_BUILD_JOBS=2 gpu_build_target srold .devcmd/main bench_summed_rows &
wait
for ds in mag am wikikg2; do
  gpu_with old python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin \
    > $R/dump-$ds.log 2>&1 &
done
F='*SegmentGemm.Cuda*/*ummed*:*SegmentGemm.Cuda*/*eighted*'
gpu_gtests new gemm "$F" "" 60
gpu_gtests new san-memcheck-gemm "$F" memcheck 60
gpu_with new timeout 120 python3 -m pytest -q -k "cuda and (rgcn or rgat or hgt)" \
  tests/python/test_generated.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_pytest_memcheck new san-memcheck-py \
  'cuda and (rgat_pyg or rgcn_pyg) and declared_hypers' 60
wait
for ds in mag am wikikg2; do
  for b in srold srnew; do
    timeout 30 ./build-$b/bin/bench_summed_rows /tmp/$ds.bin 64 64 0 2>&1 |
      grep -E "^cap" | sed -E "s/^/$ds $b /; s/ +/ /g" | tee -a $R/summed.txt
  done
done
GPU_TP_DEADLINE=560 GPU_TP_TIMEOUT=80 gpu_throughput_ab old new 2 --tf32 \
  --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference
echo "done $(gpu_elapsed)"

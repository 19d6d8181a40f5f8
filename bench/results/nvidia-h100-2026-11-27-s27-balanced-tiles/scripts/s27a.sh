#!/usr/bin/env bash
# Session 27 call a: the summed GEMM's rows cut into balanced contiguous
# ranges (entries + HECTOR_SUM_ROW_COST a row) against the strided runs
# (cost 0), and HECTOR_MMA_WAVES waves of blocks for both GEMMs, on
# bench_summed_rows (am, mag, wikikg2); templates_tests' summed and linear
# CUDA cases; kernel profiles of RGCN and RGAT inference on am and mag.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=16 gpu_build new . tests
./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
for ds in am mag wikikg2; do
  gpu_with new python3 bench/gemm/dump_graph.py $ds /tmp/$ds.bin > /dev/null 2>&1
  for cfg in "0 1" "2 1" "2 2" "2 4" "1 2" "4 2" "0 1" "2 2"; do
    set -- $cfg
    HECTOR_SUM_ROW_COST=$1 HECTOR_MMA_WAVES=$2 timeout 60 ./build-new/bin/bench_summed_rows /tmp/$ds.bin 64 32 0 2>&1 | grep "^cap" | sed -E "s/^/cost $1 waves $2 /; s/ +/ /g" >> $R/summed-$ds.txt
  done
  echo "== $ds $(gpu_elapsed)"; cut -c1-170 $R/summed-$ds.txt
done
gpu_with new timeout 150 python3 -m hector.bench.profile --tf32 --datasets am,mag --models rgcn,rgat --systems hector-cr --modes inference --rows 12 --out $R/prof > $R/prof.log 2>&1
echo "profile rc=$? $(gpu_elapsed)"
grep -E "^==|busy|Kernel|linearMma|trav|gemm|ms" $R/prof.log | cut -c1-160 | head -80
echo "done $(gpu_elapsed)"

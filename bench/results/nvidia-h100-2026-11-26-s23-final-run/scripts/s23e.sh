#!/usr/bin/env bash
# Session 23 call e: where the small graphs' RGAT training step spends its
# host time on this host, at main: host parts (hector-cr and pyg-rgat), a
# CPU-only profile of aifb's step, the kernels' device time, and the
# harness's synchronised steps with CUDA graph replay off and on.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start e
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=16 gpu_build final .
export PYTHONPATH=$PWD/runtime/python HECTOR_BUILD_DIR=$PWD/build-final
timeout 100 python3 .devcmd/hostparts.py aifb,mutag,fb15k rgat hector-cr,pyg-rgat > $R/parts.jsonl 2> $R/parts.err
echo "parts rc=$? $(gpu_elapsed)"; cat $R/parts.jsonl
timeout 40 python3 .devcmd/cpuprof.py aifb rgat hector-cr $R/cpuprof-aifb-rgat.txt 2> $R/cpuprof.err; echo "cpuprof rc=$? $(gpu_elapsed)"
timeout 60 python3 -m hector.bench.profile --tf32 --datasets aifb,mutag --models rgat --systems hector-cr --modes training --rows 20 --out $R/prof > $R/prof.log 2>&1
echo "profile rc=$? $(gpu_elapsed)"; grep "^step" $R/prof.log
for g in 0 1; do
  HECTOR_CUDA_GRAPHS=$g timeout 60 python3 -m hector.bench --tf32 --systems hector-cr --datasets aifb,mutag,bgs,fb15k --models rgat --modes training --no-chart --out $R/replay$g > $R/replay$g.log 2>&1
  echo "replay=$g rc=$?"; grep '^\[' $R/replay$g.log | cut -c1-80
done
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 16 call f: kernel times (torch.profiler, free of host noise) of
# HGT on the small graphs, worker-split contractions (head) against
# 7a5d08b (prev).
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/f.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 --target hector_C hector_rgcn_pyg hector_rgat_pyg hector_hgt_pyg > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
bench/build-variant.sh prev "" .devcmd/prev > $R/build-prev.log 2>&1
echo "build prev rc=$? $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
for tag in prev head; do
  d=$PWD/build-gpu; [ $tag = prev ] && d=$PWD/build-prev
  HECTOR_BUILD_DIR=$d timeout 60 python3 -m hector.bench.profile --datasets aifb,mutag,bgs,fb15k,am --models hgt --modes inference,training --rows 8 --out $R/prof-$tag > $R/prof-$tag.log 2>&1
  echo "prof $tag rc=$? $(( $(date +%s) - t0 )) s"
done
for f in $R/prof-head/*.txt; do
  b=$(basename $f)
  echo "== $b"
  for tag in prev head; do
    grep -E "forward_trav_4|backward_trav_7|backward_trav_4<|step " $R/prof-$tag/$b | sed -E 's/\(hect.*\)? +[0-9.]+%.*Self CUDA//' | awk -v t=$tag '{print t": "$0}' | cut -c1-60,150-260
  done
done
echo "done $(( $(date +%s) - t0 )) s"

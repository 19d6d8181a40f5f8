#!/usr/bin/env bash
# Session 20 call h (experiment, not committed code): RGAT-PyG's forward
# warp launch in groups of 16 lanes (two rows per warp; the row queue
# generalised to groups of fewer than 32 lanes), a hand edit of the
# generated launch in .devcmd/exp16, against the working tree (3bac00c).
# CUDA pytest of rgat_pyg on exp16, RGAT throughput A/B on 8 datasets,
# three rounds on the large ones.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/h.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
VARIANT_JOBS=8 bash bench/build-variant.sh gpu "" . > $R/build.log 2>&1 &
VARIANT_JOBS=8 bash bench/build-variant.sh exp16 "" .devcmd/exp16 > $R/build-exp16.log 2>&1 &
wait; echo "built $(( $(date +%s) - t0 )) s"; tail -1 $R/build.log; tail -1 $R/build-exp16.log
export PYTHONPATH=$PWD/runtime/python
HECTOR_BUILD_DIR=$PWD/build-exp16 timeout 100 python3 -m pytest tests/python/test_generated.py tests/python/test_layers.py -q -x -k "cuda and rgat_pyg" > $R/pytest-exp16.log 2>&1
echo "pytest exp16 rc=$? $(tail -1 $R/pytest-exp16.log) $(( $(date +%s) - t0 )) s"
A="--datasets aifb,mutag,bgs,biokg,am,fb15k,mag,wikikg2 --models rgat --modes inference,training"
B="--datasets am,mag,wikikg2 --models rgat --modes inference,training"
for run in "gpu A" "exp16 A" "gpu B" "exp16 B" "gpu B" "exp16 B"; do
  set -- $run; b=$1; sel=${!2}
  HECTOR_BUILD_DIR=$PWD/build-$b timeout 60 python3 -m hector.bench.throughput $sel --tag $b >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $run rc=$? $(( $(date +%s) - t0 )) s"
done
python3 -m hector.bench.compare $R/tp.jsonl --baseline gpu
HECTOR_BUILD_DIR=$PWD/build-exp16 timeout 40 python3 -m hector.bench.profile --datasets am,wikikg2 --models rgat --modes inference --out $R/prof-exp16 > $R/prof-exp16.log 2>&1
for f in $R/prof-exp16/*.txt; do echo "== $(basename $f)"; grep -E "trav|linear|step" $f | awk '{print substr($0,1,80), $(NF-3), $(NF-1), $NF}'; done
echo "done $(( $(date +%s) - t0 )) s"

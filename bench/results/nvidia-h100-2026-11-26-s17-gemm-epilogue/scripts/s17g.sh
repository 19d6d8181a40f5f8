#!/usr/bin/env bash
# Session 17 call g: at 88114f1 (call f's epilogue with the output window
# and bias row worked out once per block). Build (and d1eb7ee as
# build-old), GPU template
# tests with and without tensor cores, CUDA pytest, memcheck on the new
# cases, HGT throughput A/B on the large graphs (RGCN and RGAT on am),
# kernel profiles old/new, then the harness
# (hector, hector-cr; 8 datasets, 3 models).
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/g.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
bash bench/build-variant.sh old "" .devcmd/old > $R/build-old.log 2>&1; echo "build old rc=$? $(( $(date +%s) - t0 )) s"
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
./build-gpu/bin/templates_tests > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ')"
grep -E "^\[  FAILED" $R/templates.log | head -5
HECTOR_GEMM_MMA=0 ./build-gpu/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/*' > $R/templates-nomma.log 2>&1; echo "templates no-mma rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates-nomma.log | head -2 | tr '\n' ' ')"
timeout 100 python3 -m pytest tests/python/test_generated.py tests/python/test_deterministic.py tests/python/test_layers.py tests/python/test_nn.py tests/python/test_replay.py -q -x -k "cuda or replay or partial_row or declared or tf32" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
grep -E "^FAILED" $R/pytest.log | head -5
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-gpu/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda*/*Bias*:Table/SegmentGemm.Cuda*/*Parts*' > $R/san-memcheck-gemm.log 2>&1
echo "memcheck gemm rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-gemm.log | tail -1) $(grep -E '^\[  PASSED' $R/san-memcheck-gemm.log)"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and hgt_pyg and (plain or declared)" > $R/san-memcheck-py.log 2>&1
echo "memcheck py rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-py.log | tail -1) $(grep -E 'passed|failed' $R/san-memcheck-py.log | tail -1) $(( $(date +%s) - t0 )) s"
for b in old gpu; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout $([ $b = old ] && echo 120 || echo 60) python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models hgt --modes inference,training --tag $b >> $R/tp.jsonl 2>>$R/tp.err
  HECTOR_BUILD_DIR=$PWD/build-$b timeout 40 python3 -m hector.bench.throughput --datasets am --models rgcn,rgat --modes inference,training --tag $b >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $b rc=$? $(( $(date +%s) - t0 )) s"
done
python3 - "$R/tp.jsonl" <<'PY'
import json, sys, collections
d = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line); d[r["case"]][r["tag"]] = r["ms"]
for c in sorted(d):
    b = d[c]
    if "old" in b and "gpu" in b:
        print(f"{c:26s} old {b['old']:8.3f} new {b['gpu']:8.3f} {b['old']/b['gpu']:.3f}x")
PY
for b in old gpu; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout 40 python3 -m hector.bench.profile --datasets am --models hgt --modes inference,training --out $R/prof-$b > $R/prof-$b.log 2>&1
  echo "profile $b rc=$? $(( $(date +%s) - t0 )) s"
done
for f in $R/prof-gpu/*.txt; do n=$(basename $f); echo "$n old $(grep -o 'kernels [0-9.]* ms' $R/prof-old/$n) new $(grep -o 'kernels [0-9.]* ms' $f)"; grep -h "linearMma" $R/prof-old/$n $f | sed -E 's/ +/ /g' | awk '{n=split($0,a," "); print substr($0,1,90), a[n-1]}'; done
left=$(( 560 - ($(date +%s) - t0) ))
[ $left -gt 60 ] && timeout $left python3 -m hector.bench --systems hector,hector-cr --models rgat,rgcn,hgt --case-timeout 20 --no-chart --out $R/harness > $R/harness.log 2>&1
echo "harness rc=$? $(( $(date +%s) - t0 )) s"
tail -5 $R/harness.log
echo "done $(( $(date +%s) - t0 )) s"

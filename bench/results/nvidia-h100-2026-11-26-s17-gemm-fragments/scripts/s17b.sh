#!/usr/bin/env bash
# Session 17 call b: the linear tensor-core kernel with staged TF32 weight
# planes, ldmatrix fragments and 64-column windows. Build (and the previous
# commit's runtime from .devcmd/old as build-old), the GEMM template's GPU
# tests and sanitizers, the micro-benchmark old/new, throughput A/B on the
# large graphs, kernel profile of am, the CUDA pytest set.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/b.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
bash bench/build-variant.sh old "" .devcmd/old > $R/build-old.log 2>&1
cmake --build build-old --target bench_segment_gemm >> $R/build-old.log 2>&1; echo "build old rc=$? $(( $(date +%s) - t0 )) s"
./build-gpu/bin/templates_tests --gtest_filter='*Cuda*:ZeroFill*:GroupSum*:Quad*' > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -3 | tr '\n' ' ')"
grep -E "^\[  FAILED" $R/templates.log | head -8
S=compute-sanitizer
F="Table/SegmentGemm.Cuda/mma*:Table/SegmentGemm.Cuda/vec*"
for tool in memcheck racecheck; do
  timeout 100 $S --tool $tool --error-exitcode 99 ./build-gpu/bin/templates_tests --gtest_filter="$F" > $R/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-$tool.log | tail -1) $(grep -E '^\[  PASSED' $R/san-$tool.log)"
done
echo "tests $(( $(date +%s) - t0 )) s"
for b in old gpu; do for n in 64 192; do
  timeout 30 ./build-$b/bin/bench_segment_gemm $((3<<20)) $n > $R/gemm-$b-n$n.log 2>&1
  echo "$b N=$n"; grep -E "^linear" $R/gemm-$b-n$n.log
done; done
export PYTHONPATH=$PWD/runtime/python
for b in old gpu; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout 110 python3 -m hector.bench.throughput --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training --tag $b >> $R/tp.jsonl 2>>$R/tp.err
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
        print(f"{c:28s} old {b['old']:8.3f}  new {b['gpu']:8.3f}  {b['old']/b['gpu']:.3f}x")
PY
export HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 60 python3 -m hector.bench.profile --datasets am --models rgcn,rgat,hgt --modes inference,training --out $R/prof > $R/prof.log 2>&1
echo "profile rc=$? $(( $(date +%s) - t0 )) s"
timeout 150 python3 -m pytest tests/python/test_generated.py tests/python/test_layers.py tests/python/test_nn.py -q -x -k "cuda or tf32 or declared" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
grep -E "^FAILED" $R/pytest.log | head -5
echo "done $(( $(date +%s) - t0 )) s"

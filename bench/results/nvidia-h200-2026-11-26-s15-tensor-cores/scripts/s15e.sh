#!/usr/bin/env bash
# Session 15 call e: the outer tensor-core kernel with K windows (K <= 256):
# tests, sanitizers on the outer cases, HGT's am profile, throughput.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/e.tgz -C $OUT r' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DHECTOR_BUILD_COMPILER=OFF -DHECTOR_WITH_CUDA=ON -DHECTOR_WITH_TORCH=ON "${hector_gpu_cmake_args[@]}" > $R/configure.log 2>&1
cmake --build build-gpu -j16 > $R/build.log 2>&1 || { grep -m5 -B2 -A8 "error" $R/build.log; exit 1; }
echo "build $(( $(date +%s) - t0 )) s"
./build-gpu/bin/templates_tests --gtest_filter='*Cuda*:ZeroFill*:GroupSum*:Quad*' > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -3 | tr '\n' ' ')"
grep -E "^\[  FAILED" $R/templates.log | head -8
HECTOR_GEMM_MMA=0 ./build-gpu/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/*' > $R/templates-nomma.log 2>&1; echo "templates no-mma rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates-nomma.log | head -2 | tr '\n' ' ')"
S=/usr/local/cuda/bin/compute-sanitizer; command -v compute-sanitizer >/dev/null && S=compute-sanitizer
F="Table/SegmentGemm.Cuda/mmaOuter*:Table/SegmentGemm.DeterministicIsBitwiseRepeatableCuda/mmaOuter*"
for tool in memcheck racecheck; do
  timeout 60 $S --tool $tool --error-exitcode 99 ./build-gpu/bin/templates_tests --gtest_filter="$F" > $R/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-$tool.log | tail -1) $(grep -E '^\[  PASSED' $R/san-$tool.log)"
done
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
timeout 90 python3 -m pytest tests/python/test_generated.py tests/python/test_deterministic.py tests/python/test_layers.py tests/python/test_nn.py -q -k "cuda or tf32" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log)"
grep -E "^FAILED" $R/pytest.log | head -5
echo "correctness $(( $(date +%s) - t0 )) s"
timeout 40 python3 -m hector.bench.profile --datasets am --models hgt --modes training --rows 12 --out $R/prof-mma1 > $R/prof.log 2>&1
grep -E "Kernel<|outerKernel|linearKernel|step" $R/prof-mma1/*.txt | cut -c1-100,170-200
for tag in mma0 mma1; do
  m=${tag#mma}
  HECTOR_GEMM_MMA=$m timeout 45 python3 -m hector.bench.throughput --datasets am --models hgt,rgcn --modes inference,training --tag $tag >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $tag rc=$? $(( $(date +%s) - t0 )) s"
done
python3 - "$R/tp.jsonl" <<'PY'
import json, sys, collections
d = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line); d[r["case"]][r["tag"]] = r["ms"]
for c in sorted(d):
    b = d[c]
    if "mma0" in b and "mma1" in b:
        print(f"{c:28s} mma0 {b['mma0']:8.3f}  mma1 {b['mma1']:8.3f}  {b['mma0']/b['mma1']:.3f}x")
PY
echo "done $(( $(date +%s) - t0 )) s"

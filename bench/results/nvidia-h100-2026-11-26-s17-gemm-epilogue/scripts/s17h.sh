#!/usr/bin/env bash
# Session 17 call h: at the fused-epilogue instantiation split. Build (and
# d1eb7ee as build-old), GPU template tests, CUDA pytest on hgt_pyg,
# throughput A/B: HGT on am, mag, wikikg2; RGCN and RGAT on am.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/r; mkdir -p $R
trap 'tar czf $OUT/h.tgz -C $OUT r' EXIT
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
timeout 60 python3 -m pytest tests/python/test_generated.py tests/python/test_nn.py -q -x -k "cuda and (hgt or tf32 or declared)" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(( $(date +%s) - t0 )) s"
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
echo "done $(( $(date +%s) - t0 )) s"

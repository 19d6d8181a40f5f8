#!/usr/bin/env bash
# Session 15 call b: the tensor-core GEMM against the CUDA-core kernels on
# one build (HECTOR_GEMM_MMA=0 / 1), and TF32 allowed
# (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1): kernel profiles and throughput.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$OUT/p; mkdir -p $R
trap 'tar czf $OUT/p.tgz -C $OUT p' EXIT
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt; cat $R/gpu.txt
t0=$(date +%s)
export PYTHONPATH=$PWD/runtime/python
export HECTOR_BUILD_DIR=$PWD/build-gpu
for m in 0 1; do
  HECTOR_GEMM_MMA=$m timeout 90 python3 -m hector.bench.profile --datasets am --models rgcn,rgat,hgt --modes training --rows 14 --out $R/prof-mma$m > $R/prof-mma$m.log 2>&1
  echo "prof mma=$m rc=$? $(( $(date +%s) - t0 )) s"
done
run_tp() { # tag, env...
  local tag=$1; shift
  env "$@" timeout 100 python3 -m hector.bench.throughput --datasets fb15k,am,mag --models rgcn,rgat,hgt --modes inference,training --tag $tag >> $R/tp.jsonl 2>>$R/tp.err
  echo "tp $tag rc=$? $(( $(date +%s) - t0 )) s"
}
run_tp mma0 HECTOR_GEMM_MMA=0
run_tp mma1 HECTOR_GEMM_MMA=1
run_tp tf32 HECTOR_GEMM_MMA=1 TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1
run_tp mma0 HECTOR_GEMM_MMA=0
run_tp mma1 HECTOR_GEMM_MMA=1
python3 - "$R/tp.jsonl" <<'PY'
import json, sys, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    try: r = json.loads(line)
    except Exception: continue
    d[(r["case"], r["tag"])].append(r["ms"])
cases = sorted({c for c, _ in d})
for c in cases:
    b = {t: min(d[(c, t)]) for t in ("mma0", "mma1", "tf32") if (c, t) in d}
    s = "  ".join(f"{t} {v:8.3f}" for t, v in b.items())
    if "mma0" in b and "mma1" in b:
        s += f"  mma {b['mma0']/b['mma1']:.3f}x"
    if "mma0" in b and "tf32" in b:
        s += f"  tf32 {b['mma0']/b['tf32']:.3f}x"
    print(f"{c:40s} {s}")
PY
echo "done $(( $(date +%s) - t0 )) s"

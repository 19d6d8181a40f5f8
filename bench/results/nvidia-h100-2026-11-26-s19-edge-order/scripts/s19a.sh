set -x
# Session 19 call a: RGCN forward as one scatter GEMM (hand edit, not kept)
# against the current path, on three edge orders of am, mag, wikikg2.
# .devcmd/proto: a git archive of ca0096c with experiments/scatter_gemm_patch.py
# applied to generated/rgcn_pyg/kernels.cu; .devcmd/proto_bench.py is
# experiments/scatter_gemm_bench.py.
source scripts/gpu-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || nvidia-smi -L
(VARIANT_JOBS=8 bash bench/build-variant.sh proto "" .devcmd/proto > $OUT/build-proto.log 2>&1) &
VARIANT_JOBS=8 bash bench/build-variant.sh main "" . > $OUT/build-main.log 2>&1
wait
tail -2 $OUT/build-*.log
export PYTHONPATH=$PWD/runtime/python
for b in main proto; do
  HECTOR_BUILD_DIR=$PWD/build-$b timeout 200 python3 .devcmd/proto_bench.py am,mag,wikikg2 $b $OUT orig,etype_dst,chunk16 2>&1 | tail -12
done
HECTOR_BUILD_DIR=$PWD/build-proto PROTO_SEGPTR=1 timeout 100 python3 .devcmd/proto_bench.py am,wikikg2 protoseg $OUT orig 2>&1 | tail -4
python3 - <<'PY'
import torch, glob, os
out=os.environ["OUT"]
for f in sorted(glob.glob(out+"/proto*-*.pt")):
    tag, rest = os.path.basename(f).split("-",1)
    ref = torch.load(out+"/main-"+rest)
    got = torch.load(f)
    print(os.path.basename(f), "max rel err", float((got-ref).abs().max()/ref.abs().max()))
PY

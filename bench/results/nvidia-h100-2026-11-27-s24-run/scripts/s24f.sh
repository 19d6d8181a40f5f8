#!/usr/bin/env bash
# Session 24 call f: hector.nn's faster per-call checks (4760f95) on the
# GPU: the nn tests on CUDA, the drop-in's host time per inference call
# against hector-cr's (old = 78f0739's Python package, new = this one, one
# build: the C++ is the same), and the --tf32 throughput of the hector
# system, old and new package, two interleaved rounds.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start f
GPU_BUILD_JOBS=16 gpu_build main .
export HECTOR_BUILD_DIR=$PWD/build-main
old=$PWD/.devcmd/old/runtime/python new=$PWD/runtime/python
PYTHONPATH=$new timeout 120 python3 -m pytest tests/python/test_nn.py tests/python/test_bad_input.py -q -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
for tag in old new; do
  PYTHONPATH=${!tag} timeout 90 python3 .devcmd/dropin_prof.py aifb,mutag,fb15k hgt,rgat,rgcn > $R/dropin-$tag.log 2>&1
  echo "dropin $tag rc=$? $(gpu_elapsed)"; grep "host us" $R/dropin-$tag.log
done
for round in 1 2; do
  for tag in old new; do
    PYTHONPATH=${!tag} timeout 100 python3 -m hector.bench.throughput --tf32 --systems hector --models rgcn,rgat,hgt --datasets aifb,mutag,bgs,fb15k --modes inference,training --tag $tag >> $R/tp.jsonl 2>> $R/tp.err
    echo "throughput $tag round $round rc=$? $(gpu_elapsed)"
  done
done
PYTHONPATH=$new python3 - $R/tp.jsonl > $R/ab.txt <<'PY'
import json, sys, collections
best = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r = json.loads(line)
    k = (r["case"], r["system"])
    best[k][r["tag"]] = min(best[k].get(r["tag"], 1e30), r["ms"])
for (case, system), t in sorted(best.items()):
    if "old" in t and "new" in t:
        print(f"{case:28s} {system:10s} old {t['old']:8.3f}  new {t['new']:8.3f} ({t['old'] / t['new']:.3f}x)")
PY
cat $R/ab.txt
echo "done $(gpu_elapsed)"

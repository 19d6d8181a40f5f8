#!/usr/bin/env bash
# Session 20 call i: bench/gpu-session.sh tried out: two builds side by
# side (this tree, and 5dd6d55's copy), a CUDA test through gpu_with, and
# a one-round throughput A/B of RGAT on aifb and mutag.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start i
gpu_build new . &
gpu_build old .devcmd/old &
wait
cat build-new/hector-tree build-old/hector-tree
gpu_with new timeout 60 python3 -m pytest tests/python/test_generated.py -q -x -k "cuda and declared and rgcn_pyg" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_with old python3 -c "import hector, os; print(hector.__file__, os.environ['HECTOR_BUILD_DIR'])"
gpu_throughput_ab old new 1 --datasets aifb,mutag --models rgat --modes inference
echo "done $(gpu_elapsed)"

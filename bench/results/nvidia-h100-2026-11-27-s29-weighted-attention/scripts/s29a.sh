#!/usr/bin/env bash
# Session 29 call a: RGAT's inference program (uncompact-weighted-sums:
# the attention-weighted message sum as one weighted summed GEMM, the
# heads taking the weight's columns; the template's sumWeightIds,
# xSharedByHeads and wHeadsInColumns). templates_tests' CUDA cases; CUDA
# pytest's RGAT cases (the inference program against the interpreter,
# deterministic runs, the training path unchanged); memcheck and initcheck
# on the inference cases; hector.bench's RGAT inference on am, mag and
# wikikg2 for main before the change (.devcmd/old) and this tree,
# interleaved, and this tree's training on am.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
GPU_BUILD_JOBS=10 gpu_build new . tests &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
wait
./build-new/bin/templates_tests --gtest_filter='*Cuda*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED" $R/templates.log | head
gpu_with new timeout 300 python3 -m pytest -q -p no:cacheprovider tests/python -k "cuda and (rgat or without_grad or inference)" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -20
for tool in memcheck initcheck; do
  gpu_with new timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and without_grad and rgat and float32" > $R/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY' $R/san-$tool.log | tail -1) $(tail -1 $R/san-$tool.log) $(gpu_elapsed)"
done
for tag in old new; do
  gpu_with $tag timeout 200 python3 -m hector.bench --tf32 --datasets am,mag,wikikg2 --models rgat --modes inference --systems hector-cr,hector --out $R/bench-$tag --no-chart > $R/bench-$tag.log 2>&1
  echo "bench $tag rc=$? $(gpu_elapsed)"; grep -E "^\[" $R/bench-$tag.log | sed "s/^/$tag /"
done
gpu_with new timeout 120 python3 -m hector.bench --tf32 --datasets am --models rgat --modes training --systems hector-cr --out $R/bench-train --no-chart > $R/bench-train.log 2>&1
echo "train rc=$? $(gpu_elapsed)"; grep -E "^\[" $R/bench-train.log
echo "done $(gpu_elapsed)"

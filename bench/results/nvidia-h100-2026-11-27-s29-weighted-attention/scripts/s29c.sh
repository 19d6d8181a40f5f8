#!/usr/bin/env bash
# Session 29 call c: after call b's profile, the inference program stores
# the softmax weights in the summed entries' order (RowScheme::EntryRows:
# the GEMM reads them in order, no weight ids) and starts RGAT-PyG's output
# as the bias (GemmInstance::initRow: no zero-fill, no bias traversal).
# templates_tests' CUDA cases (FillRows too); CUDA pytest's RGAT and
# inference cases; memcheck and initcheck on the inference cases;
# hector.bench's RGAT inference on am, mag and wikikg2, main before the
# session (.devcmd/old) against this tree, two interleaved rounds; the
# profile of this tree's am and mag.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
[ -x build-old/lib/libhector_rgat_pyg.so ] || { GPU_BUILD_JOBS=6 gpu_build old .devcmd/old & }
GPU_BUILD_JOBS=10 gpu_build new . tests
wait
./build-new/bin/templates_tests --gtest_filter='*Cuda*:FillRows*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED" $R/templates.log | head
gpu_with new timeout 300 python3 -m pytest -q -p no:cacheprovider tests/python -k "cuda and (rgat or without_grad or inference or deterministic)" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
grep -E "^FAILED|Error" $R/pytest.log | head -20
for tool in memcheck initcheck; do
  gpu_with new timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and without_grad and rgat and float32" > $R/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY' $R/san-$tool.log | tail -1) $(tail -1 $R/san-$tool.log) $(gpu_elapsed)"
done
for tag in old new old new; do
  gpu_with $tag timeout 150 python3 -m hector.bench --tf32 --datasets am,mag,wikikg2 --models rgat --modes inference --systems hector-cr,hector --out $R/bench-$tag --no-chart > $R/bench-$tag.log 2>&1
  echo "bench $tag rc=$? $(gpu_elapsed)"; grep -E "^\[" $R/bench-$tag.log | sed "s/^/$tag /"
done
gpu_with new timeout 120 python3 -m hector.bench.profile --tf32 --datasets am,mag,wikikg2 --models rgat --modes inference --systems hector-cr --rows 10 --out $R/profile > $R/profile.log 2>&1
echo "profile rc=$? $(gpu_elapsed)"
echo "done $(gpu_elapsed)"

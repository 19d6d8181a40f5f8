#!/usr/bin/env bash
# Session 26 call a: main with RGCN's forward as two GEMMs (uncompacted
# segment sums, the bias on the root GEMM, no zero-fill) against e24c0f6:
# CUDA pytest (every built variant against PyG too), memcheck and
# initcheck on the RGCN CUDA cases, and the harness's RGCN inference and
# training for hector, hector-cr and hector-u on am, mag, wikikg2, both
# trees on one machine.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start a
hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
GPU_BUILD_JOBS=11 gpu_build new . tests &
GPU_BUILD_JOBS=5 gpu_build old .devcmd/old &
wait
gpu_with new timeout 200 python3 -m pytest tests/python -q -x -p no:cacheprovider -k "cuda or built_variants" > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
for tool in memcheck initcheck; do
  gpu_with new timeout 110 compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 50 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py tests/python/test_deterministic.py tests/python/test_bad_input.py -k "cuda and rgcn and not gradcheck" > $R/san-$tool.log 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY' $R/san-$tool.log | tail -1) $(grep -E '[0-9]+ passed' $R/san-$tool.log | tail -1) $(gpu_elapsed)"
done
for tag in old new; do
  gpu_with $tag timeout 100 python3 -m hector.bench --tf32 --systems hector,hector-cr,hector-u --models rgcn --modes inference,training --datasets am,mag,wikikg2 --no-chart --out $R/harness-$tag > $R/harness-$tag.log 2>&1
  echo "harness $tag rc=$? $(gpu_elapsed)"; grep -E "ms  floor" $R/harness-$tag.log | sed -E 's/ +/ /g'
done
echo "done $(gpu_elapsed)"

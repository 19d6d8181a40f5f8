#!/usr/bin/env bash
# Session 30 call c, on call b's machine and builds (call b's memcheck ran
# past its 100 s): memcheck on the RGAT and HGT generated CUDA cases
# (given numbering, fp32) and on the layers' RGAT-PyG and HGT-PyG CUDA
# cases (dst numbering); the harness's RGAT inference rows on am, mag and
# wikikg2 for old and new, interleaved.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start c
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
gpu_with new timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_generated.py -k "cuda and (rgat or hgt) and float32" > $R/san-memcheck-generated.log 2>&1
echo "memcheck generated rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-generated.log | tail -1) $(tail -1 $R/san-memcheck-generated.log) $(gpu_elapsed)"
gpu_with new timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 python3 -m pytest -q -p no:cacheprovider tests/python/test_layers.py -k "cuda and (rgat_pyg or hgt_pyg)" > $R/san-memcheck-layers.log 2>&1
echo "memcheck layers rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-layers.log | tail -1) $(tail -1 $R/san-memcheck-layers.log) $(gpu_elapsed)"
for tag in old new old new; do
  gpu_with $tag timeout 60 python3 -m hector.bench --tf32 --datasets am,mag,wikikg2 --models rgat --modes inference --systems hector-cr --out $R/bench-$tag --no-chart > $R/bench-$tag.log 2>&1
  echo "bench $tag rc=$? $(gpu_elapsed)"; grep -E "^\[" $R/bench-$tag.log | sed "s/^/$tag /"
done
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 40 call f: Nsight Compute's full set, with source-level (SASS)
# counters, on the two largest kernels of HGT-PyG's am inference step
# (hector-cr): the kqv projection (dense rows, windows together) and the
# softmax traversal's launches. Section 93 asked for this before the kqv
# kernel's next change.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start f
GPU_BUILD_JOBS=16 gpu_build new .
N=ncu; command -v ncu >/dev/null || N=/usr/local/cuda/bin/ncu
gpu_with new timeout 200 $N --set full --import-source yes --clock-control none \
  -k 'regex:denseRowsMmaKernel|inference_trav_2' -c 3 -o $R/hgt-am \
  python3 -m hector.bench.profile --tf32 --datasets am --models hgt \
  --systems hector-cr --modes inference --steps 1 --warmup 0 --rows 4 \
  --out $R/profile > $R/ncu.log 2>&1
echo "ncu rc=$? $(gpu_elapsed)"; tail -3 $R/ncu.log
$N -i $R/hgt-am.ncu-rep --page details > $R/hgt-am-details.txt 2>&1
echo "details rc=$? $(wc -l < $R/hgt-am-details.txt) lines"
$N -i $R/hgt-am.ncu-rep --page source --print-source sass --csv > $R/hgt-am-sass.csv 2>&1
echo "sass rc=$? $(wc -l < $R/hgt-am-sass.csv) lines $(gpu_elapsed)"
ls -la $R

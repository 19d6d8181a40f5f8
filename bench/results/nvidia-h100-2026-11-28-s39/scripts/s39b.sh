#!/usr/bin/env bash
# Session 39 call b: the dense-rows kernel also takes gelu input and a
# gated mix beside a bias (HGT's output projection). Correctness: the
# templates_tests dense cases (bitwise against the tiled kernel) and the
# whole CUDA GEMM table; memcheck on the dense cases and on the generated
# HGT-PyG CUDA cases at the declared hypers; the CUDA pytest of the HGT
# layers. Speed: a profile of HGT-PyG inference (hector-cr) on am and mag
# with the dense kernel and without it (HECTOR_GEMM_DENSE=0: the kqv and
# output projections on the tiled kernel); HGT inference and training on
# am, mag and wikikg2 against main 53dce54 (`old`, .devcmd/old), one round.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
GPU_BUILD_JOBS=10 gpu_build new . tests &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
wait
timeout 120 ./build-new/bin/templates_tests \
  --gtest_filter='*dense*:*Dense*:Table/SegmentGemm.Cuda/*' > $R/templates.log 2>&1
echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
grep -E "^\[  FAILED|Failure" -A3 $R/templates.log | head -20
S=/usr/local/cuda/bin/compute-sanitizer; command -v compute-sanitizer >/dev/null && S=compute-sanitizer
timeout 60 $S --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests \
  --gtest_filter='Table/SegmentGemm.Cuda*/*dense*:SegmentGemmCuda.Dense*' > $R/san-memcheck-gemm.log 2>&1
echo "memcheck gemm rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-gemm.log | tail -1) $(gpu_elapsed)"
gpu_with new timeout 60 $S --tool memcheck --error-exitcode 99 python3 -m pytest \
  tests/python/test_generated.py -q -x -k "cuda and hgt_pyg and declared_hypers" \
  > $R/san-memcheck-py.log 2>&1
echo "memcheck py rc=$? $(grep -E 'ERROR SUMMARY' $R/san-memcheck-py.log | tail -1) $(tail -1 $R/san-memcheck-py.log) $(gpu_elapsed)"
gpu_with new timeout 60 python3 -m pytest -q -x -k "cuda and hgt" \
  tests/python/test_generated.py tests/python/test_nn.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
for dense in 1 0; do
  HECTOR_GEMM_DENSE=$dense gpu_with new timeout 60 python3 -m hector.bench.profile --tf32 \
    --datasets am,mag --models hgt --systems hector-cr --modes inference \
    --steps 10 --warmup 3 --rows 8 --out $R/profile-dense$dense > $R/profile-dense$dense.log 2>&1
  echo "profile dense=$dense rc=$? $(gpu_elapsed)"
  grep -E "^==|^step|gemm|Gemm|Dense" $R/profile-dense$dense.log | head -24
done
GPU_TP_DEADLINE=420 GPU_TP_TIMEOUT=90 gpu_throughput_ab old new 1 --tf32 \
  --datasets am,mag,wikikg2 --models hgt --modes inference,training
echo "done $(gpu_elapsed)"

#!/usr/bin/env bash
# Session 21 call g: the linear tensor-core GEMM looks up a tile's rows a
# tile ahead and walks the segment pointers from the previous tile's
# slice, against HEAD (1ae... before it; its own Python package): GPU
# template tests (with and without tensor cores), racecheck and memcheck
# on the CUDA GEMM table, CUDA pytest, throughput A/B with TF32 and
# without on the large graphs, ncu of am RGCN's GEMMs.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/gpu-session.sh
gpu_session_start g
GPU_BUILD_JOBS=10 gpu_build new . tests &
GPU_BUILD_JOBS=6 gpu_build old .devcmd/old &
wait
./build-new/bin/templates_tests > $R/templates.log 2>&1; echo "templates rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates.log | head -2 | tr '\n' ' ') $(gpu_elapsed)"
HECTOR_GEMM_MMA=0 ./build-new/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/*' > $R/templates-nomma.log 2>&1; echo "templates no-mma rc=$? $(grep -E '^\[  PASSED|^\[  FAILED' $R/templates-nomma.log | head -2 | tr '\n' ' ')"
timeout 70 compute-sanitizer --tool racecheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/*' > $R/san-racecheck-gemm.log 2>&1
echo "racecheck gemm rc=$? $(tail -1 $R/san-racecheck-gemm.log) $(gpu_elapsed)"
timeout 70 compute-sanitizer --tool memcheck --error-exitcode 99 ./build-new/bin/templates_tests --gtest_filter='Table/SegmentGemm.Cuda/*' > $R/san-memcheck-gemm.log 2>&1
echo "memcheck gemm rc=$? $(tail -1 $R/san-memcheck-gemm.log) $(gpu_elapsed)"
gpu_with new timeout 150 python3 -m pytest tests/python -q -x -k cuda > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
GPU_TP_TIMEOUT=90 gpu_throughput_ab old new 2 --tf32 --datasets am,mag,wikikg2 --models rgcn,rgat,hgt --modes inference,training > $R/ab-tf32.txt
mv $R/tp.jsonl $R/tp-tf32.jsonl

cat $R/ab-tf32.txt
M="--section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats"
gpu_with new timeout 60 ncu --clock-control none $M -k regex:"Mma" python3 -m hector.bench.profile --tf32 --datasets am --models rgcn --modes inference --steps 1 --warmup 0 --rows 4 > $R/ncu-am-tf32.txt 2>&1
echo "ncu rc=$? $(gpu_elapsed)"
echo "done $(gpu_elapsed)"

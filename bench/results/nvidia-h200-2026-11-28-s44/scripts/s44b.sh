#!/usr/bin/env bash
# Session 44, call b (right after call a, on the same warm machine: the
# builds are reused, or rebuilt as in call a). HGT's softmax rows: a warp
# a row (HECTOR_NODE_ROW_LANES=32, `warp`: main's launch) against 16-lane
# groups (`narrow`, the default on am, mag and wikikg2) on build `new`,
# inference and training, three rounds. Then mag's heavy and warp softmax launches side
# by side (`overlap`) or one after the other (`chain`), RGAT and HGT
# inference, with the time left.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
(
  hector_gpu_cmake_args+=(-DHECTOR_BUILD_BENCH_VARIANTS=ON)
  GPU_BUILD_JOBS=12 gpu_build new . tests
) &
(
  hector_gpu_cmake_args+=("-DCMAKE_CUDA_FLAGS=-DHECTOR_SUM_LANES=16")
  GPU_BUILD_JOBS=4 gpu_build l16 .
) &
wait
# (Call a measured the 8-lane summed GEMM slower, so l16 against new in
# training was dropped from this call before it ran.)
GPU_TP_DEADLINE=380 GPU_TP_TIMEOUT=100 gpu_throughput_env_ab new \
  HECTOR_NODE_ROW_LANES warp=32 narrow=0 3 --tf32 \
  --datasets am,mag,wikikg2 --models hgt --modes inference,training
GPU_TP_FILE=tp-chain.jsonl GPU_TP_DEADLINE=540 GPU_TP_TIMEOUT=30 \
  gpu_throughput_env_ab new HECTOR_HEAVY_FIRST_EDGES overlap=1048576 \
  chain=1000000000000 2 --tf32 --datasets mag --models rgat,hgt \
  --modes inference
echo "done $(gpu_elapsed)"

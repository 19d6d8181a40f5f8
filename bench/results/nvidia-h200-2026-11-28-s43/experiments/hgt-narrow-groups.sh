#!/usr/bin/env bash
# For the next session's device calls (not run in session 43): HGT's
# softmax rows in groups of 16 lanes (experiments/hgt-narrow-groups.diff,
# perf-notes section 104). Apply the diff to main (git apply; it
# regenerates generated/hgt* and bench/variants/hgt_pyg_*), copy this
# script into the session's scripts/ and run it there. One build: the
# groups follow nodeRowLanes (16 lanes at most 16 edges a row: am, mag and
# wikikg2), and HECTOR_NODE_ROW_LANES=32 restores a warp a row (`warp`,
# main's launch) on the same build. Checks: the CUDA HGT pytest cases
# (test_node_row_groups_of_either_size_match_interpreter forces both
# sizes), memcheck on the generated HGT-PyG cases. Speed: HGT inference
# and training on am, mag and wikikg2, three interleaved rounds. Then,
# with the time left, mag's heavy and warp softmax launches side by side
# (`overlap`, the default) or one after the other (`chain`:
# HECTOR_HEAVY_FIRST_EDGES above mag's edge count), RGAT and HGT inference,
# two rounds (perf-notes section 101's last point).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
source bench/gpu-session.sh
gpu_session_start b
GPU_BUILD_JOBS=16 gpu_build new . tests
gpu_with new timeout 120 python3 -m pytest -q -k "cuda and (hgt or HGT)" \
  tests/python/test_generated.py tests/python/test_nn.py > $R/pytest.log 2>&1
echo "pytest rc=$? $(tail -1 $R/pytest.log) $(gpu_elapsed)"
gpu_pytest_memcheck new san-memcheck-py 'cuda and hgt_pyg and declared_hypers'
GPU_TP_DEADLINE=420 GPU_TP_TIMEOUT=100 gpu_throughput_env_ab new \
  HECTOR_NODE_ROW_LANES warp=32 narrow=0 3 --tf32 \
  --datasets am,mag,wikikg2 --models hgt --modes inference,training
GPU_TP_FILE=tp-chain.jsonl GPU_TP_DEADLINE=540 GPU_TP_TIMEOUT=40 \
  gpu_throughput_env_ab new HECTOR_HEAVY_FIRST_EDGES overlap=1048576 \
  chain=1000000000000 2 --tf32 --datasets mag --models rgat,hgt \
  --modes inference
echo "done $(gpu_elapsed)"

"""Session 45, call e: RGCN inference with `hector` on DATASET back to
back for SECONDS (bursts of 25 steps; one JSON line a burst: wall time
since the start, mean step), to see whether a sustained load changes the
step's time (nvidia-smi logs the clocks and throttle reasons beside it).
Usage: s45e_sustained.py DATASET SECONDS
"""
import json
import sys
import time

import torch

from hector import datasets as hds
from hector.bench import systems as S
from hector.bench.problem import make_problem
from hector.bench.runner import _step, matmul_tf32
from hector.bench.throughput import time_steps


def main():
    ds, seconds = sys.argv[1], float(sys.argv[2])
    dev = torch.device("cuda")
    graph = hds.synthetic(ds, device=dev)
    prob = make_problem(ds, "rgcn", graph, 64, 1, dev)
    step = _step(S.SYSTEMS["hector"].prepare(prob), prob, "inference")
    with matmul_tf32(True):
        step()
        torch.cuda.synchronize()
        t0 = time.time()
        burst = 0
        while time.time() - t0 < seconds:
            ms = time_steps(step, dev, 25, 0)
            print(json.dumps({"t": round(time.time() - t0, 3),
                              "unix": round(time.time(), 3), "burst": burst,
                              "ms": round(ms, 4)}), flush=True)
            burst += 1


if __name__ == "__main__":
    main()

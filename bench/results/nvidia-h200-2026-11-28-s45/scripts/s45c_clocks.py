"""Session 45, call c: one system's step time against time and the GPU's
state. RGCN inference with `hector` on DATASET: 3 s idle, then 60 bursts
of 25 steps back to back (hector.bench.throughput.time_steps), a 4 s
pause after burst 30. Prints one JSON line a burst: the wall time since
the start and the mean step. nvidia-smi logs the clocks beside it (s45c.sh).
Usage: s45c_clocks.py DATASET
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
    ds = sys.argv[1]
    dev = torch.device("cuda")
    graph = hds.synthetic(ds, device=dev)
    prob = make_problem(ds, "rgcn", graph, 64, 1, dev)
    step = _step(S.SYSTEMS["hector"].prepare(prob), prob, "inference")
    with matmul_tf32(True):
        step()
        torch.cuda.synchronize()
        time.sleep(3)
        t0 = time.time()
        for burst in range(60):
            if burst == 30:
                time.sleep(4)
            ms = time_steps(step, dev, 25, 0)
            print(json.dumps({"t": round(time.time() - t0, 3),
                              "unix": round(time.time(), 3), "burst": burst,
                              "ms": round(ms, 4)}), flush=True)


if __name__ == "__main__":
    main()

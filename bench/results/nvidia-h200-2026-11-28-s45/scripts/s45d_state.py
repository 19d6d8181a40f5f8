"""Session 45, call d: does a step's time depend on what else the process
allocated? RGCN inference on DATASET, mean of 25 steps back to back
(five bursts each, printed):
  A  `hector` alone, fresh;
  B  the same after hector-cr ran once (its graph's kernel arrays built);
  C  the same after hector-cr and its graph are freed;
  D  a `hector` prepared again on a copy of x (new placement of x);
  E  hector-cr itself.
Usage: s45d_state.py DATASET
"""
import gc
import json
import sys

import torch

from hector import datasets as hds
from hector.bench import systems as S
from hector.bench.problem import make_problem
from hector.bench.runner import _step, matmul_tf32
from hector.bench.throughput import time_steps


def bursts(label, step, dev):
    ms = [round(time_steps(step, dev, 25, 2), 4) for _ in range(5)]
    print(json.dumps({"phase": label, "ms": ms,
                      "allocated_gb": round(torch.cuda.memory_allocated()
                                            / 2**30, 2),
                      "reserved_gb": round(torch.cuda.memory_reserved()
                                           / 2**30, 2)}), flush=True)


def main():
    ds = sys.argv[1]
    dev = torch.device("cuda")
    graph = hds.synthetic(ds, device=dev)
    prob = make_problem(ds, "rgcn", graph, 64, 1, dev)
    with matmul_tf32(True):
        nn_step = _step(S.SYSTEMS["hector"].prepare(prob), prob, "inference")
        bursts("A hector alone", nn_step, dev)
        cr_step = _step(S.SYSTEMS["hector-cr"].prepare(prob), prob,
                        "inference")
        cr_step()
        torch.cuda.synchronize()
        bursts("B hector after hector-cr ran", nn_step, dev)
        bursts("E hector-cr", cr_step, dev)
        del cr_step
        prob.cache.pop("hector_graph", None)
        gc.collect()
        torch.cuda.empty_cache()
        bursts("C hector after hector-cr freed", nn_step, dev)
        prob.x = prob.x.clone()
        nn2 = _step(S.SYSTEMS["hector"].prepare(prob), prob, "inference")
        bursts("D hector on a copy of x", nn2, dev)


if __name__ == "__main__":
    main()

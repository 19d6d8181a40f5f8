"""Session 36 call e: does each Hector system's training step replay its
ops' launch graphs when timed as the harness times it (CUDA events around
each step, synchronised after it)? For each system on aifb and mutag RGAT
training: cudaGraphLaunch and cudaLaunchKernel calls a step over 5
profiled steps after 5 warm-up steps, and the median step of 30."""
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile

from hector.bench.problem import make_problem
from hector.bench.runner import _step
from hector.bench.systems import SYSTEMS
from hector.bench.timing import time_fn
import hector.datasets as hds


def main(datasets, systems):
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    for ds in datasets:
        g = hds.synthetic(ds, device=dev)
        prob = make_problem(ds, "rgat", g, 64, 1, dev)
        for name in systems:
            prep = SYSTEMS[name].prepare(prob)
            fn = _step(prep, prob, "training")
            time_fn(fn, dev, 5, 5)
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                time_fn(fn, dev, 5, 0)
            counts = {e.key: e.count for e in prof.key_averages()}
            ms = statistics.median(time_fn(fn, dev, 30, 0))
            print(f"{ds} {name:10s} step {ms:.3f} ms; a step: "
                  f"{counts.get('cudaGraphLaunch', 0) / 5:.1f} graph "
                  f"launches, {counts.get('cudaLaunchKernel', 0) / 5:.1f} "
                  f"kernel launches", flush=True)
            for p in prep.params:
                p.grad = None
            del prep


if __name__ == "__main__":
    main(sys.argv[1].split(","), sys.argv[2].split(","))

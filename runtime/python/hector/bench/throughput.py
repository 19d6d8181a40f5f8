"""Steps per second of benchmark cases (python -m hector.bench.throughput).

For each (dataset, model, system, mode) it prepares the case as the
harness does, runs --warmup steps, then --steps steps back to back between
two CUDA events (on the CPU, between two clock reads after a sync) and
prints one JSON line: {"tag", "case", "system", "ms"} with the mean step.

The harness times each step on its own (median of 10, synchronised), which
on small graphs measures the host as much as the GPU: one step of aifb
RGAT is 0.3 ms, and its median moves by 20% or more between calls. Steps
back to back average the host's jitter out, so two builds compared this
way, interleaved (tag A, tag B, tag A, tag B), differ by what changed
(docs/perf-notes.md section 16).
"""

import argparse
import json
import sys
import time

import torch

from .__main__ import _csv


def time_steps(fn, device, steps, warmup):
    """Mean milliseconds per call of fn() over `steps` calls back to back,
    after `warmup` calls."""
    for _ in range(warmup):
        fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(steps):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / steps
    t0 = time.perf_counter()
    for _ in range(steps):
        fn()
    return (time.perf_counter() - t0) * 1e3 / steps


def main(argv=None):
    from .. import datasets as hds
    from . import systems as S
    from .problem import make_problem
    from .runner import _step

    p = argparse.ArgumentParser(prog="python -m hector.bench.throughput")
    p.add_argument("--datasets", type=_csv, default=["aifb"])
    p.add_argument("--models", type=_csv, default=["rgcn", "rgat", "hgt"])
    p.add_argument("--systems", type=_csv, default=["hector"])
    p.add_argument("--modes", type=_csv, default=["inference", "training"])
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--heads", type=int, default=1)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--device", default=None)
    p.add_argument("--tag", default="",
                   help="copied into every line (the build's name)")
    args = p.parse_args(argv)
    if args.steps < 1 or args.warmup < 0:
        p.error("--steps must be >= 1 and --warmup >= 0")
    for name in args.systems:
        if name not in S.SYSTEMS:
            p.error(f"unknown system {name!r}")
    device = torch.device(args.device or
                          ("cuda" if torch.cuda.is_available() else "cpu"))
    for ds in args.datasets:
        graph = hds.synthetic(ds, device=device, scale=args.scale)
        for model in args.models:
            prob = make_problem(ds, model, graph, args.dim, args.heads,
                                device)
            for name in args.systems:
                if model not in S.SYSTEMS[name].models:
                    continue
                prepared = S.SYSTEMS[name].prepare(prob)
                for mode in args.modes:
                    ms = time_steps(_step(prepared, prob, mode), device,
                                    args.steps, args.warmup)
                    for prm in prepared.params:
                        prm.grad = None
                    print(json.dumps({"tag": args.tag,
                                      "case": f"{ds}-{model}-{mode}",
                                      "system": name, "ms": ms}),
                          flush=True)
                del prepared
            del prob
        del graph
    return 0


if __name__ == "__main__":
    sys.exit(main())

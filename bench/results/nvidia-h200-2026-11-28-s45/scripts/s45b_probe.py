"""Session 45, call b: where a synchronised step's time goes beyond its
kernels, for Hector systems that run the same kernels.

For each dataset: RGCN inference with the systems given, prepared side by
side on one problem, then three interleaved rounds of, per system:
- harness: the median of 20 steps each between two CUDA events after a
  sync (hector.bench.timing.time_fn, as the harness times a step);
- b2b: the mean of 30 steps back to back between two events
  (hector.bench.throughput.time_steps);
- host: the median host time of the step's call (no wait at its end).
Then one torch.profiler pass of 5 synchronised steps a system: the time
from the step's start (host) to its first kernel's start (GPU), its
kernels' busy time and the span from first kernel start to last end.
Usage: s45b_probe.py DATASETS SYSTEMS OUTDIR
"""
import json
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from hector import datasets as hds
from hector.bench import systems as S
from hector.bench.problem import make_problem
from hector.bench.runner import _step, matmul_tf32
from hector.bench.throughput import time_steps
from hector.bench.timing import time_fn


def host_ms(step, n=20):
    out = []
    for _ in range(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        out.append((time.perf_counter() - t0) * 1e3)
    torch.cuda.synchronize()
    return statistics.median(out)


def profiled(step, name, outdir, ds):
    with profile(activities=[ProfilerActivity.CPU,
                             ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            torch.cuda.synchronize()
            with record_function("probe_step"):
                step()
            torch.cuda.synchronize()
    prof.export_chrome_trace(f"{outdir}/trace-{ds}-{name}.json")
    evs = prof.events()
    steps = sorted((e.time_range.start, e.time_range.end) for e in evs
                   if e.name == "probe_step")
    kernels = sorted((e.time_range.start, e.time_range.end, e.name)
                     for e in evs if e.device_type.name == "CUDA")
    rows = []
    for i, (s, _) in enumerate(steps):
        nxt = steps[i + 1][0] if i + 1 < len(steps) else float("inf")
        ks = [k for k in kernels if s <= k[0] < nxt]
        if not ks:
            continue
        busy = sum(k[1] - k[0] for k in ks)
        rows.append({"first_kernel_us": ks[0][0] - s,
                     "span_us": max(k[1] for k in ks) - ks[0][0],
                     "busy_us": busy, "kernels": len(ks),
                     "first": ks[0][2][:60]})
    return rows


def main():
    datasets, names, outdir = sys.argv[1].split(","), sys.argv[2].split(","), \
        sys.argv[3]
    dev = torch.device("cuda")
    for ds in datasets:
        graph = hds.synthetic(ds, device=dev)
        prob = make_problem(ds, "rgcn", graph, 64, 1, dev)
        steps = {n: _step(S.SYSTEMS[n].prepare(prob), prob, "inference")
                 for n in names}
        with matmul_tf32(True):
            for rnd in range(3):
                for n in names:
                    h = statistics.median(time_fn(steps[n], dev, 20, 3))
                    b = time_steps(steps[n], dev, 30, 3)
                    print(json.dumps({"ds": ds, "system": n, "round": rnd,
                                      "harness": round(h, 4),
                                      "b2b": round(b, 4),
                                      "host": round(host_ms(steps[n]), 4)}),
                          flush=True)
            for n in names:
                for r in profiled(steps[n], n, outdir, ds):
                    print(json.dumps({"ds": ds, "system": n, **r}),
                          flush=True)
        del steps, prob, graph
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()

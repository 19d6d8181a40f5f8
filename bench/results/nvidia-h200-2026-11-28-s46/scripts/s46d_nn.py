"""Session 46, call d: why hector.nn's drop-in (`hector`) takes longer a
synchronised step than the same library through LayerLibrary.run
(`hector-cr`): session 43's table has HGT aifb at 0.865 against 0.437 ms,
RGCN aifb 0.111 against 0.079.

For each case, both systems: the median of 20 synchronised steps
(time_fn, as the harness), then a torch.profiler trace of 5 synchronised
steps: per step the host time from the step's start to its first kernel,
the GPU span, the kernels' time, and the CUDA runtime calls by name
(launches, graph launches, copies, synchronisations); and the CPU ops
with the most self time over the 5 steps.
Usage: s46d_nn.py OUTDIR [DEVICE [SCALE]]
"""
import collections
import json
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from hector import datasets as hds
from hector.bench import systems as S
from hector.bench.problem import make_problem
from hector.bench.runner import _step, matmul_tf32
from hector.bench.timing import time_fn

CASES = [("hgt", "aifb"), ("hgt", "mutag"), ("rgcn", "aifb"),
         ("rgat", "aifb"), ("hgt", "am")]


def trace_steps(step, dev, path):
    cuda = dev.type == "cuda"
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=acts) as prof:
        for _ in range(5):
            if cuda:
                torch.cuda.synchronize()
            with record_function("probe_step"):
                step()
            if cuda:
                torch.cuda.synchronize()
    prof.export_chrome_trace(path)
    top = sorted(prof.key_averages(), key=lambda a: -a.self_cpu_time_total)
    ops = [(a.key[:50], a.count, round(a.self_cpu_time_total / 5, 1))
           for a in top[:14]]
    trace = json.load(open(path))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    steps = sorted(e["ts"] for e in events
                   if e.get("name") == "probe_step" and e.get("ph") == "X"
                   and e.get("cat", "user_annotation") == "user_annotation")
    rows = []
    for i, s in enumerate(steps):
        end = steps[i + 1] if i + 1 < len(steps) else float("inf")
        ks = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                    if e.get("cat") == "kernel" and e.get("ph") == "X"
                    and s <= e["ts"] < end)
        rt = collections.Counter(
            e["name"] for e in events
            if e.get("cat") == "cuda_runtime" and e.get("ph") == "X"
            and s <= e["ts"] < end)
        rows.append({
            "first_kernel_after_us": round(ks[0][0] - s, 1) if ks else None,
            "gpu_span_us": round(ks[-1][1] - ks[0][0], 1) if ks else None,
            "kernels": len(ks),
            "kernel_us": round(sum(b - a for a, b in ks), 1),
            "runtime": dict(rt)})
    return rows, ops


def main():
    out = sys.argv[1]
    dev = torch.device(sys.argv[2] if len(sys.argv) > 2 else "cuda")
    scale = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    for model, ds in CASES:
        prob = make_problem(ds, model,
                            hds.synthetic(ds, device=dev, scale=scale), 64, 1,
                            dev)
        for system in ("hector", "hector-cr"):
            step = _step(S.SYSTEMS[system].prepare(prob), prob, "inference")
            with matmul_tf32(True):
                med = statistics.median(time_fn(step, dev, 20, 3))
                rows, ops = trace_steps(
                    step, dev, f"{out}/trace-{model}-{ds}-{system}.json")
            print(json.dumps({"model": model, "dataset": ds,
                              "system": system, "sync_ms": round(med, 4),
                              "steps": rows[2:], "top_cpu_ops": ops}),
                  flush=True)


if __name__ == "__main__":
    main()

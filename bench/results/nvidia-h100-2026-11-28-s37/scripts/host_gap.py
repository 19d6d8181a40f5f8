"""Where a step's time goes before its first kernel (session 37 call d).

Runs each case's step as the harness times it (synchronised, CUDA events
around the call) under torch.profiler, each step inside a "step"
annotation, and reads the Chrome trace back: per step, the time from the
step's start to the generated op's start (Python before the op), from
the op's start to its first launch (the op's checks and allocation), from
that launch to its kernel's start, and the kernels' span; medians over the
steps. Usage (the harness's case arguments):

    python3 host_gap.py --tf32 --datasets mag --models rgcn \
        --systems hector-r,hector --modes inference --steps 20 --out DIR
"""

import argparse
import json
import os
import statistics

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from hector.bench.cases import (add_case_arguments, check_systems, device_of,
                                prepared_cases)
from hector.bench.runner import _step, matmul_tf32

LAUNCHES = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cudaGraphLaunch")


def timed_steps(fn, steps, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    with profile(activities=[ProfilerActivity.CPU,
                             ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            with record_function("step"):
                start.record()
                fn()
                end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    return prof, times


def split(trace_path):
    """Per step (us): python before the op, the op to its first launch,
    that launch to its kernel's start, the kernels' span."""
    events = json.load(open(trace_path))["traceEvents"]
    xs = [e for e in events if e.get("ph") == "X"]
    steps = sorted((e for e in xs if e.get("name") == "step"
                    and e.get("cat") == "user_annotation"),
                   key=lambda e: e["ts"])
    kernels = {e["args"].get("correlation"): e for e in xs
               if e.get("cat") == "kernel"}
    rows = []
    for s in steps:
        t0, t1 = s["ts"], s["ts"] + s["dur"]
        inside = [e for e in xs if t0 <= e["ts"] <= t1]
        ops = [e for e in inside if e.get("cat") == "cpu_op"
               and e["name"].startswith("hector_")]
        launches = sorted((e for e in inside if e["name"] in LAUNCHES),
                          key=lambda e: e["ts"])
        if not ops or not launches:
            continue
        op = min(ops, key=lambda e: e["ts"])
        ks = [kernels[e["args"]["correlation"]] for e in launches
              if e["args"].get("correlation") in kernels]
        if not ks:
            continue
        first = launches[0]
        k0 = min(ks, key=lambda e: e["ts"])
        k1 = max(ks, key=lambda e: e["ts"] + e["dur"])
        rows.append((op["ts"] - t0, first["ts"] - op["ts"],
                     k0["ts"] - first["ts"], k1["ts"] + k1["dur"] - k0["ts"],
                     len(launches)))
    return rows


def main():
    p = argparse.ArgumentParser()
    add_case_arguments(p, datasets=["mag"], steps=20, warmup=5)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    check_systems(p, args)
    device = device_of(args)
    os.makedirs(args.out, exist_ok=True)
    for ds, model, name, prob, prepared in prepared_cases(args, device):
        for mode in args.modes:
            title = f"{ds}-{model}-{name}-{mode}"
            with matmul_tf32(args.tf32):
                prof, times = timed_steps(_step(prepared, prob, mode),
                                          args.steps, args.warmup)
            path = os.path.join(args.out, title + ".trace.json")
            prof.export_chrome_trace(path)
            rows = split(path)
            med = [statistics.median(c) for c in zip(*rows)] if rows else []
            print(f"{title}: step {statistics.median(times):.3f} ms "
                  f"(events, median of {len(times)}); " +
                  (f"python before the op {med[0]:.1f} us, op to its first "
                   f"launch {med[1]:.1f} us, launch to kernel start "
                   f"{med[2]:.1f} us, kernels' span {med[3]:.1f} us, "
                   f"{med[4]:.0f} launches ({len(rows)} steps)"
                   if med else "no steps found in the trace"), flush=True)


if __name__ == "__main__":
    main()

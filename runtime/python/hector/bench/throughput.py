"""Steps per second of benchmark cases (python -m hector.bench.throughput).

For each (dataset, model, system, mode) it prepares the case as the
harness does, runs --warmup steps, then --steps steps back to back between
two CUDA events (on the CPU, between two clock reads after a sync) and
prints one JSON line: {"tag", "case", "system", "ms", "tf32"} with the mean
step. --tf32 lets the matmuls use TF32 as the harness's --tf32 does (the
issue's final run may), so that A/B runs can time the kernels it runs.

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
    from .cases import (add_case_arguments, check_systems, device_of,
                        prepared_cases)
    from .runner import _step, matmul_tf32

    p = argparse.ArgumentParser(prog="python -m hector.bench.throughput")
    add_case_arguments(p, datasets=["aifb"], steps=30, warmup=5)
    p.add_argument("--tag", default="",
                   help="copied into every line (the build's name)")
    args = p.parse_args(argv)
    if args.steps < 1 or args.warmup < 0:
        p.error("--steps must be >= 1 and --warmup >= 0")
    check_systems(p, args)
    device = device_of(args)
    for ds, model, name, prob, prepared in prepared_cases(args, device):
        for mode in args.modes:
            with matmul_tf32(args.tf32):
                ms = time_steps(_step(prepared, prob, mode), device,
                                args.steps, args.warmup)
            for prm in prepared.params:
                prm.grad = None
            print(json.dumps({"tag": args.tag, "case": f"{ds}-{model}-{mode}",
                              "system": name, "ms": ms,
                              "tf32": args.tf32}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

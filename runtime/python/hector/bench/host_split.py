"""Where a step's wall time goes on the host (python -m
hector.bench.host_split).

For each selected case it runs the harness's step (runner._step) with a
host clock read between its phases, and prints the median of each phase
over --steps steps:

  training:  clear (p.grad = None), forward (the system's forward call
             returning), loss (mse_loss), backward (loss.backward()
             returning), wait (the device finishing after that)
  inference: forward, wait

A phase's time is host time: the launches are asynchronous, so `forward`
is what the call costs the CPU, not its kernels. A step whose `wait` is
near zero kept the GPU waiting on the host, and only less host work
(fewer launches, less Python, less autograd bookkeeping) will shorten
it; a large `wait` means the kernels are the step. The line also gives
the step's median wall time (host clock around phase and sync, one step
at a time, as the harness's CUDA events time it) and the host's smallest
training step (timing.training_step_floor) for scale.
"""

import argparse
import statistics
import sys
import time

import torch

from .timing import _sync

PHASES = {"training": ("clear", "forward", "loss", "backward", "wait"),
          "inference": ("forward", "wait")}


def _phased_step(prepared, prob, mode, device):
    """A step of `mode` that returns the host seconds of each of
    PHASES[mode]; it computes what runner._step's step computes."""
    fwd, params, target = prepared.forward, prepared.params, prob.target
    clock = time.perf_counter

    if mode == "inference":
        def infer():
            t0 = clock()
            with torch.no_grad():
                fwd()
            t1 = clock()
            _sync(device)
            return (t1 - t0, clock() - t1)
        return infer

    def train():
        t0 = clock()
        for p in params:
            p.grad = None
        t1 = clock()
        out = fwd()
        t2 = clock()
        loss = torch.nn.functional.mse_loss(out, target)
        t3 = clock()
        loss.backward()
        t4 = clock()
        _sync(device)
        return (t1 - t0, t2 - t1, t3 - t2, t4 - t3, clock() - t4)
    return train


def split(prepared, prob, mode, device, steps, warmup):
    """{phase: median ms} over `steps` steps after `warmup`, plus "step"
    (the median of each step's summed phases)."""
    step = _phased_step(prepared, prob, mode, device)
    for _ in range(warmup):
        step()
    _sync(device)
    runs = [step() for _ in range(steps)]
    out = {ph: 1e3 * statistics.median(r[i] for r in runs)
           for i, ph in enumerate(PHASES[mode])}
    out["step"] = 1e3 * statistics.median(sum(r) for r in runs)
    return out


def format_split(title, ms, mode):
    parts = " ".join(f"{ph} {ms[ph]:.3f}" for ph in PHASES[mode])
    return f"{title}: step {ms['step']:.3f} ms = {parts}"


def main(argv=None):
    from .cases import (add_case_arguments, check_systems, device_of,
                        prepared_cases)
    from .runner import matmul_tf32
    from .timing import training_step_floor

    p = argparse.ArgumentParser(prog="python -m hector.bench.host_split")
    add_case_arguments(p, datasets=["aifb", "mutag"], steps=200, warmup=20)
    args = p.parse_args(argv)
    check_systems(p, args)
    for mode in args.modes:
        if mode not in PHASES:
            p.error(f"unknown mode {mode!r}")
    device = device_of(args)
    if device.type == "cuda":
        print(f"host's smallest training step "
              f"{training_step_floor(device):.3f} ms", flush=True)

    def unprepared(ds, model, name, exc):
        print(f"{ds}-{model}-{name}: {type(exc).__name__}: {exc}",
              flush=True)

    for ds, model, name, prob, prepared in prepared_cases(
            args, device, False, unprepared):
        for mode in args.modes:
            title = f"{ds}-{model}-{name}-{mode}"
            try:
                with matmul_tf32(args.tf32):
                    ms = split(prepared, prob, mode, device, args.steps,
                               args.warmup)
                print(format_split(title, ms, mode), flush=True)
            except Exception as exc:  # noqa: BLE001
                print(f"{title}: {type(exc).__name__}: {exc}", flush=True)
            for prm in prepared.params:
                prm.grad = None
    return 0


if __name__ == "__main__":
    sys.exit(main())

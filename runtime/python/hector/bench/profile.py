"""Kernel-level profile of benchmark cases (python -m hector.bench.profile).

For each (dataset, model, system, mode) it prepares the case exactly as the
harness does, warms it up, and runs a few steps under torch.profiler; it
prints the kernels sorted by total device time and, with --out, writes
each table to <out>/<dataset>-<model>-<system>-<mode>.txt. This is the tool
behind docs/perf-notes.md: it says which generated kernel or template
launch a case spends its time in.

Each table ends with a line that compares the step's wall time (median of
--steps runs, CUDA events) with the device time of its kernels: a GPU busy
for a small part of the step is waiting on the host (launches, syncs,
allocation), which no kernel change will fix.
"""

import argparse
import os
import statistics
import sys

import torch



def _profile_case(prepared, prob, mode, steps, warmup, device):
    from torch.profiler import ProfilerActivity, profile

    from .runner import _step

    fn = _step(prepared, prob, mode)
    for _ in range(warmup):
        fn()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    acts = [ProfilerActivity.CPU]
    if device.type == "cuda":
        acts.append(ProfilerActivity.CUDA)
    with profile(activities=acts) as prof:
        for _ in range(steps):
            fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    return prof


def _table(prof, device, steps, rows, sort_by="device"):
    sort = "cuda_time_total" if device.type == "cuda" and \
        sort_by == "device" else "cpu_time_total"
    head = f"(totals over {steps} steps)\n"
    return head + prof.key_averages().table(sort_by=sort, row_limit=rows,
                                            max_name_column_width=90)


def _self_device_us(event):
    # torch >= 2.4 names it device time; older releases CUDA time.
    t = getattr(event, "self_device_time_total", None)
    return t if t is not None else getattr(event, "self_cuda_time_total", 0)


# Device-side entries of the profiler's own work, not the step's: CUPTI
# buffer requests showed up at 8.6 ms over 5 steps of am RGCN training.
_PROFILER_OWN = frozenset({"Activity Buffer Request"})


def device_busy(prof, step_ms, steps):
    """(kernel ms per step, busy fraction of the step): the device time of
    the profiled kernels, memsets and copies over the step's wall time.
    Only device events count: torch >= 2 also gives each CPU op the device
    time of the kernels it launched, which would count them twice. The
    profiler's own buffer requests do not count either."""
    from torch.autograd import DeviceType

    on_device = [e for e in prof.key_averages()
                 if getattr(e, "device_type", None) == DeviceType.CUDA
                 and e.key not in _PROFILER_OWN]
    kernel_ms = sum(_self_device_us(e) for e in on_device) / 1e3 / steps
    return kernel_ms, (kernel_ms / step_ms if step_ms > 0 else None)


def _busy_line(prof, fn, device, steps):
    from .timing import time_fn

    step_ms = statistics.median(time_fn(fn, device, steps, 0))
    kernel_ms, busy = device_busy(prof, step_ms, steps)
    if device.type != "cuda":
        return f"step {step_ms:.3f} ms (median of {steps}); no device time " \
               f"on {device.type}"
    return (f"step {step_ms:.3f} ms (median of {steps}), kernels "
            f"{kernel_ms:.3f} ms per step: GPU busy {100 * busy:.0f}%")


def main(argv=None):
    from .cases import (add_case_arguments, check_systems, device_of,
                        prepared_cases)
    from .runner import _step, matmul_tf32

    p = argparse.ArgumentParser(prog="python -m hector.bench.profile")
    add_case_arguments(p, datasets=["mutag"], steps=5, warmup=2)
    p.add_argument("--rows", type=int, default=15)
    p.add_argument("--out", default=None)
    p.add_argument("--sort", choices=("device", "host"), default="device",
                   help="order the table by device time (which kernels) "
                        "or by host time (which ops keep the CPU busy: "
                        "for steps where the GPU waits on the host)")
    p.add_argument("--trace", action="store_true",
                   help="with --out, also write each case's Chrome trace "
                        "(<title>.trace.json)")
    p.add_argument("--input-grad", action="store_true",
                   help="the input features require grad (as learned "
                        "embeddings would): training then also computes "
                        "their gradient; tables are named ...-input-grad")
    args = p.parse_args(argv)
    check_systems(p, args)
    device = device_of(args)
    if args.out:
        os.makedirs(args.out, exist_ok=True)

    def unprepared(ds, model, name, exc):
        print(f"== {ds} {model} {name}: {type(exc).__name__}: {exc}",
              flush=True)

    for ds, model, name, prob, prepared in prepared_cases(
            args, device, args.input_grad, unprepared):
        for mode in args.modes:
            title = f"{ds}-{model}-{name}-{mode}" + \
                ("-input-grad" if args.input_grad else "")
            try:
                with matmul_tf32(args.tf32):
                    prof = _profile_case(prepared, prob, mode, args.steps,
                                         args.warmup, device)
                    busy = _busy_line(prof, _step(prepared, prob, mode),
                                      device, args.steps)
                text = _table(prof, device, args.steps, args.rows, args.sort)
                if args.trace and args.out:
                    prof.export_chrome_trace(os.path.join(
                        args.out, title + ".trace.json"))
                text += "\n" + busy
            except Exception as exc:  # noqa: BLE001
                text = f"{type(exc).__name__}: {exc}"
            print(f"== {title}\n{text}", flush=True)
            if args.out:
                with open(os.path.join(args.out, title + ".txt"), "w") as f:
                    f.write(text + "\n")
            for prm in prepared.params:
                prm.grad = None
    return 0


if __name__ == "__main__":
    sys.exit(main())

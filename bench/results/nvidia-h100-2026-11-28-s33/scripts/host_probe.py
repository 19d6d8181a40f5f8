"""Session 33's probe of the host latency in a harness-timed call.

For each selected case (prepared as hector.bench prepares it): the
harness's time (CUDA events around one synchronised call, median of 20),
the time back to back (20 calls between two events, mean), the host's
own time for one call while the GPU is idle (perf_counter around the call
without a sync, median of 20), and the CPU ops that take the host's time
in one profiled call (torch.profiler, self CPU time, top 15).

Usage (on the GPU machine, with a build's package on PYTHONPATH):
  python3 host_probe.py --datasets am --models rgcn --modes inference --tf32
"""
import argparse
import statistics
import time

import torch

from hector.bench.cases import add_case_arguments, device_of, prepared_cases
from hector.bench.runner import _step, matmul_tf32
from hector.bench.throughput import time_steps
from hector.bench.timing import time_fn


def host_ms(fn, device, repeats):
    out = []
    for _ in range(repeats):
        torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e3)
    torch.cuda.synchronize(device)
    return statistics.median(out)


def main():
    p = argparse.ArgumentParser()
    add_case_arguments(p, datasets=["am"], steps=20, warmup=5)
    p.add_argument("--profile", action="store_true")
    args = p.parse_args()
    device = device_of(args)
    for ds, model, name, prob, prepared in prepared_cases(args, device):
        for mode in args.modes:
            with matmul_tf32(args.tf32):
                fn = _step(prepared, prob, mode)
                harness = statistics.median(time_fn(fn, device, 20, 5))
                b2b = time_steps(fn, device, 20, 5)
                host = host_ms(fn, device, 20)
                print(f"{ds}-{model}-{mode} {name}: harness {harness:.3f} ms"
                      f"  back to back {b2b:.3f} ms  host (GPU idle)"
                      f" {host:.3f} ms", flush=True)
                if args.profile:
                    from torch.profiler import ProfilerActivity, profile
                    torch.cuda.synchronize(device)
                    with profile(activities=[ProfilerActivity.CPU,
                                             ProfilerActivity.CUDA]) as prof:
                        fn()
                        torch.cuda.synchronize(device)
                    print(prof.key_averages().table(
                        sort_by="self_cpu_time_total", row_limit=15),
                        flush=True)
                    evs = sorted(prof.events(), key=lambda e: e.time_range.start)
                    t0 = evs[0].time_range.start
                    for e in evs[:60]:
                        print(f"  {e.time_range.start - t0:9.1f} us"
                              f" {e.cpu_time_total:8.1f} us"
                              f" {str(e.device_type).split('.')[-1]:5s} {e.name[:70]}")
            for prm in prepared.params:
                prm.grad = None


if __name__ == "__main__":
    main()

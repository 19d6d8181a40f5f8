"""Session 45, call i: where call g's slow synchronised mag step goes.
In one process: the harness on am's RGCN inference with `hector` alone
(as call g's third run began), then mag's `hector` step: the harness's
synchronised median (time_fn, 20 steps), the mean back to back, and a
torch.profiler trace of 5 synchronised steps, read from its Chrome trace:
for each step, the host time from the step's start to its first kernel's
start on the GPU, the GPU time from the first kernel's start to the last
one's end, and the kernels' own time.
Usage: s45i_trace.py OUTDIR [DEVICE [SCALE]] (default cuda, 1.0; a CPU
run at a small scale checks the script, not the question)
"""
import json
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from hector import bench
from hector import datasets as hds
from hector.bench import systems as S
from hector.bench.problem import make_problem
from hector.bench.runner import _step, matmul_tf32
from hector.bench.throughput import time_steps
from hector.bench.timing import time_fn


def main():
    out = sys.argv[1]
    dev = torch.device(sys.argv[2] if len(sys.argv) > 2 else "cuda")
    scale = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    bench.run(bench.Config(datasets=["am"], models=["rgcn"],
                           modes=["inference"], systems=["hector"],
                           device=str(dev), scale=scale, tf32=True,
                           chart=False, out=f"{out}/harness-am"),
              log=print)
    mag = make_problem("mag", "rgcn",
                       hds.synthetic("mag", device=dev, scale=scale), 64, 1,
                       dev)
    step = _step(S.SYSTEMS["hector"].prepare(mag), mag, "inference")
    with matmul_tf32(True):
        sync = statistics.median(time_fn(step, dev, 20, 3))
        b2b = time_steps(step, dev, 30, 3)
        print(json.dumps({"mag_sync_median": round(sync, 4),
                          "mag_b2b": round(b2b, 4)}), flush=True)
        cuda = dev.type == "cuda"
        activities = [ProfilerActivity.CPU] + \
            ([ProfilerActivity.CUDA] if cuda else [])
        with profile(activities=activities) as prof:
            for _ in range(5):
                if cuda:
                    torch.cuda.synchronize()
                with record_function("probe_step"):
                    step()
                if cuda:
                    torch.cuda.synchronize()
    path = f"{out}/trace-mag.json"
    prof.export_chrome_trace(path)
    trace = json.load(open(path))
    # Kineto writes {"traceEvents": [...]}; torch's legacy profiler (a CPU
    # build of torch 1.13) a bare list.
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    # The host's annotation ("user_annotation"), not its copy on the GPU's
    # timeline ("gpu_user_annotation").
    steps = sorted(e["ts"] for e in events
                   if e.get("name") == "probe_step" and e.get("ph") == "X"
                   and e.get("cat", "user_annotation") == "user_annotation")
    kernels = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in events
                     if e.get("cat") == "kernel" and e.get("ph") == "X")
    for i, s in enumerate(steps):
        end = steps[i + 1] if i + 1 < len(steps) else float("inf")
        ks = [k for k in kernels if s <= k[0] < end]
        if ks:
            print(json.dumps({
                "step": i, "first_kernel_after_us": round(ks[0][0] - s, 1),
                "gpu_span_us": round(max(k[1] for k in ks) - ks[0][0], 1),
                "kernel_us": round(sum(k[1] - k[0] for k in ks), 1),
                "kernels": [(k[2][:40], round(k[1] - k[0], 1)) for k in ks]}),
                flush=True)


if __name__ == "__main__":
    main()

"""Host cost of a step: hostcost.py DATASETS MODELS SYSTEMS.
For each case and mode: synchronised step time (median of 30), and the
host's enqueue time per step (wall time of 30 unsynchronised steps, the GPU
kept behind by a 20 ms sleep kernel first, so the host never waits)."""
import argparse, statistics, sys, time, json, torch
from hector.bench.cases import add_case_arguments, prepared_cases
from hector.bench.runner import _step
ds, models, systems = sys.argv[1:4]
p = argparse.ArgumentParser(); add_case_arguments(p, ds.split(","), 1, 0)
args = p.parse_args(["--datasets", ds, "--models", models, "--systems", systems])
for d, m, s, prob, prepared in prepared_cases(args, torch.device("cuda")):
    for mode in ("inference", "training"):
        fn = _step(prepared, prob, mode)
        for _ in range(5): fn()
        torch.cuda.synchronize()
        sync = []
        for _ in range(30):
            t = time.perf_counter(); fn(); torch.cuda.synchronize(); sync.append(time.perf_counter() - t)
        host = []
        for _ in range(3):
            torch.cuda._sleep(40_000_000)  # ~20 ms of GPU time ahead of the host
            t = time.perf_counter()
            for _ in range(20): fn()
            host.append((time.perf_counter() - t) / 20)
            torch.cuda.synchronize()
        print(json.dumps(dict(case=f"{d}-{m}-{s}-{mode}", tag=__import__("os").environ.get("TAG", ""), sync_ms=round(statistics.median(sync)*1e3, 4),
                              host_ms=round(min(host)*1e3, 4))), flush=True)

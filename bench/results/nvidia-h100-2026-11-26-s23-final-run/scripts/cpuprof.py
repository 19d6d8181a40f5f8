"""CPU-only profile (no CUPTI) of 20 training steps, GPU kept ahead:
cpuprof.py DATASET MODEL SYSTEM OUT."""
import argparse, sys, torch
from torch.profiler import profile, ProfilerActivity
from hector.bench.cases import add_case_arguments, prepared_cases
ds, model, system, out = sys.argv[1:5]
p = argparse.ArgumentParser(); add_case_arguments(p, [ds], 1, 0)
args = p.parse_args(["--datasets", ds, "--models", model, "--systems", system])
for d, m, s, prob, prepared in prepared_cases(args, torch.device("cuda")):
    fwd, params, target = prepared.forward, prepared.params, prob.target
    def step():
        for q in params: q.grad = None
        torch.nn.functional.mse_loss(fwd(), target).backward()
    for _ in range(10): step()
    torch.cuda.synchronize(); torch.cuda._sleep(100_000_000)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(20): step()
    torch.cuda.synchronize()
    with open(out, "w") as fh:
        fh.write(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=40, max_name_column_width=90))

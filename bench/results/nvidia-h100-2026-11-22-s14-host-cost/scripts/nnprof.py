"""cProfile of the Python side of a step: nnprof.py DATASET MODEL SYSTEMS.
For each system: 200 inference steps and 100 training steps (GPU kept
ahead), top functions by own time."""
import argparse, cProfile, io, pstats, sys, torch
from hector.bench.cases import add_case_arguments, prepared_cases
from hector.bench.runner import _step
ds, model, systems = sys.argv[1:4]
p = argparse.ArgumentParser(); add_case_arguments(p, [ds], 1, 0)
args = p.parse_args(["--datasets", ds, "--models", model, "--systems", systems])
for d, m, s, prob, prepared in prepared_cases(args, torch.device("cuda")):
    for mode, n in (("inference", 200), ("training", 100)):
        fn = _step(prepared, prob, mode)
        for _ in range(5): fn()
        torch.cuda.synchronize(); torch.cuda._sleep(200_000_000)
        pr = cProfile.Profile(); pr.enable()
        for _ in range(n): fn()
        pr.disable(); torch.cuda.synchronize()
        out = io.StringIO()
        pstats.Stats(pr, stream=out).sort_stats("tottime").print_stats(14)
        print(f"===== {d}-{m}-{s}-{mode} ({n} steps)")
        print(out.getvalue()[:3500])

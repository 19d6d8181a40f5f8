"""Session 24: where the hector.nn HGTConv drop-in's call spends its host
time on the GPU machine, against hector-cr's call (same kernels)."""
import cProfile, os, pstats, sys, time
import torch
from hector.bench import systems as S
from hector.bench.problem import make_problem
from hector import datasets as hds

dev = torch.device("cuda")
PROFILE = os.environ.get("PROFILE") == "1"
for ds in sys.argv[1].split(","):
  g = hds.synthetic(ds, device=dev)
  for model in sys.argv[2].split(","):
    prob = make_problem(ds, model, g, 64, 1, dev)
    res = {}
    for name in ("hector", "hector-cr"):
        p = S.SYSTEMS[name].prepare(prob)
        with torch.no_grad():
            for _ in range(5):
                p.forward()
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(50):
                p.forward()
            host = (time.perf_counter() - t) / 50 * 1e6
            torch.cuda.synchronize()
            res[name] = (round(host, 1), round((time.perf_counter() - t) / 50 * 1e6, 1))
            if name == "hector" and PROFILE:
                pr = cProfile.Profile()
                pr.enable()
                for _ in range(50):
                    p.forward()
                torch.cuda.synchronize()
                pr.disable()
                print(f"== {ds} hector cProfile (50 calls)")
                pstats.Stats(pr).sort_stats("tottime").print_stats(22)
        del p
    print(ds, model, "host us, host+sync us per call:", res, flush=True)

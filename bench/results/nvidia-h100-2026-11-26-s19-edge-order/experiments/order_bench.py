import dataclasses, json, os, sys
import torch
from hector import datasets as hds
from hector.bench.problem import make_problem
from hector.bench import systems as S
from hector.bench.throughput import time_steps
from hector.bench.runner import _step

dev = torch.device("cuda")
models = sys.argv[2].split(",")
orders = sys.argv[3].split(",")
for ds in sys.argv[1].split(","):
    g0 = hds.synthetic(ds, device=dev)
    src, dst = g0.edge_index
    et = g0.edge_type
    N, R = g0.num_nodes, g0.num_etypes
    for oname in orders:
        if oname == "orig":
            g = g0
        else:
            key = {"dst": dst * R + et, "dstsrc": dst * N + src,
                   "src": src * R + et, "etype_dst": et * N + dst}[oname]
            o = torch.argsort(key)
            g = dataclasses.replace(g0, edge_index=g0.edge_index[:, o].contiguous(),
                                    edge_type=et[o].contiguous())
        for model in models:
            prob = make_problem(ds, model, g, 64, 1, dev)
            prepared = S.SYSTEMS["hector"].prepare(prob)
            for mode in ("inference", "training"):
                ms = time_steps(_step(prepared, prob, mode), dev, 15, 3)
                print(json.dumps({"ds": ds, "model": model, "mode": mode, "order": oname,
                                  "ms": round(ms, 4)}), flush=True)
            for p in prepared.params: p.grad = None
            del prepared, prob
            torch.cuda.empty_cache()

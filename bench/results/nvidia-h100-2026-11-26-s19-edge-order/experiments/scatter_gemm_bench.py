import dataclasses, json, os, sys, time
import torch
from hector import datasets as hds
from hector.bench.problem import make_problem
from hector.bench import systems as S
from hector.bench.throughput import time_steps
from hector.bench.runner import _step

dev = torch.device("cuda")
tag = sys.argv[2]
outdir = sys.argv[3]
orders = sys.argv[4].split(",")
for ds in sys.argv[1].split(","):
    g0 = hds.synthetic(ds, device=dev)
    src, dst = g0.edge_index
    et = g0.edge_type
    N, R = g0.num_nodes, g0.num_etypes
    for oname in orders:
        if oname == "orig":
            g = g0
        else:
            if oname == "etype_dst":
                key = et * N + dst
            elif oname.startswith("chunk"):
                b = int(oname[5:])
                key = ((dst >> b) * R + et) * N + dst
            o = torch.argsort(key)
            g = dataclasses.replace(g0, edge_index=g0.edge_index[:, o].contiguous(),
                                    edge_type=et[o].contiguous())
        prob = make_problem(ds, "rgcn", g, 64, 1, dev)
        prepared = S.SYSTEMS["hector"].prepare(prob)
        fn = _step(prepared, prob, "inference")
        ms = time_steps(fn, dev, 20, 3)
        with torch.no_grad():
            out = prepared.forward()
        torch.save(out[::101].cpu(), f"{outdir}/{tag}-{ds}-{oname}.pt")
        print(json.dumps({"tag": tag, "ds": ds, "order": oname, "ms": round(ms, 4),
                          "env_segptr": bool(os.environ.get("PROTO_SEGPTR"))}), flush=True)
        del prepared, prob, out, g
        torch.cuda.empty_cache()

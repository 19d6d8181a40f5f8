"""Does a case's time follow its hubs or its edge count?
(python -m hector.bench.degree_probe)

For each (dataset, model) it times the forward of a system on the
synthetic graph, then on the same graph with every edge's destination
redrawn uniformly among the nodes of that destination's type: the same
nodes, types, relations and edge count, but no hubs (the largest in-degree
falls from thousands to a few dozen). A kernel whose time falls with the
largest degree is bound by its longest row, one whose time stays is bound
by its per-edge work. docs/perf-notes.md cites its output.
"""

import argparse
import dataclasses
import statistics
import sys

import torch

from .__main__ import _csv


def flatten_degrees(graph, seed=0):
    """`graph` with each edge's destination redrawn uniformly within the
    destination's node type (node types are contiguous id blocks)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed)
    ntype = graph.node_type.cpu()
    counts = torch.bincount(ntype, minlength=graph.num_ntypes)
    offsets = torch.cumsum(counts, 0) - counts
    dst = graph.edge_index[1].cpu()
    dst_t = ntype[dst]
    u = torch.rand(dst.numel(), generator=gen, dtype=torch.float64)
    new_dst = offsets[dst_t] + (u * counts[dst_t]).long().clamp_max(
        counts[dst_t] - 1)
    edge_index = torch.stack([graph.edge_index[0].cpu(), new_dst])
    return dataclasses.replace(
        graph, edge_index=edge_index.to(graph.edge_index.device),
        name=graph.name + "-flat")


def _max_in_degree(graph):
    return int(torch.bincount(graph.edge_index[1],
                              minlength=graph.num_nodes).max())


def main(argv=None):
    from .. import datasets as hds
    from . import systems as S
    from .problem import make_problem
    from .timing import time_fn

    p = argparse.ArgumentParser(prog="python -m hector.bench.degree_probe")
    p.add_argument("--datasets", type=_csv, default=["mutag", "fb15k"])
    p.add_argument("--models", type=_csv, default=["rgcn", "rgat", "hgt"])
    p.add_argument("--systems", type=_csv, default=["hector"])
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--device", default=None)
    args = p.parse_args(argv)
    device = torch.device(args.device or
                          ("cuda" if torch.cuda.is_available() else "cpu"))
    print("dataset graph max_in_degree model system forward_ms", flush=True)
    for ds in args.datasets:
        power_law = hds.synthetic(ds, device=device)
        for graph in (power_law, flatten_degrees(power_law)):
            hub = _max_in_degree(graph)
            for model in args.models:
                prob = make_problem(ds, model, graph, args.dim, 1, device)
                for name in args.systems:
                    if model not in S.SYSTEMS[name].models:
                        continue
                    fwd = S.SYSTEMS[name].prepare(prob).forward
                    with torch.no_grad():
                        ms = statistics.median(
                            time_fn(fwd, device, args.repeats, 3))
                    print(f"{ds} {graph.name} {hub} {model} {name} "
                          f"{ms:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

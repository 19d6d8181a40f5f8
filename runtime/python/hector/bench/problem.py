"""One benchmark problem: a (dataset, model) pair on a device, holding the
graph, the input features, the training target and the ONE set of random
weights every system uses.

The weights live in a PyG module (RGCNConv, RGATConv or HGTConv); systems
that are not that module read its parameters directly (the Hector
interpreter takes them as its params, as tests/python/test_interpreter_pyg.py
does; the segment-MM baseline uses RGCNConv's weight/root/bias; FastRGCNConv
loads RGCNConv's state_dict), so every system computes the same function of
the same tensors.

Output layout (what every system's forward returns, compared and fed to the
loss): [N, out] in node order for rgcn and rgat; for hgt the rows of the node
types that are some relation's destination (PyG's HGTConv returns None for
the others), concatenated in node-type order. Nodes of the synthetic graphs
are in contiguous blocks by type, so these are the rows of `row_mask`.
"""

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import torch

__all__ = ["Problem", "make_problem", "MODELS"]

MODELS = ("rgcn", "rgat", "hgt")


@dataclass
class Problem:
    dataset: str
    model: str
    graph: object            # hector.datasets.GraphData on `device`
    device: torch.device
    dim: int
    heads: int
    x: torch.Tensor          # [N, dim] fp32
    target: torch.Tensor     # like the output layout
    conv: torch.nn.Module    # the PyG module owning the weights
    weight_names: Tuple[str, ...]   # the PyG parameters the model uses
    row_mask: Optional[torch.Tensor] = None   # hgt: output rows
    # hgt only: the heterograph as PyG's dicts
    node_types: List[str] = None
    edge_types: List[Tuple[str, str, str]] = None
    type_offsets: List[int] = None
    dst_types: List[str] = None
    cache: Dict[str, object] = field(default_factory=dict)

    @property
    def out_dim(self):
        return self.dim

    def weights(self):
        """The PyG parameters the model uses (the training leaves)."""
        named = dict(self.conv.named_parameters())
        return [named[n] for n in self.weight_names]

    def x_dict(self, x=None):
        x = self.x if x is None else x
        o = self.type_offsets
        return {t: x[o[i]:o[i + 1]] for i, t in enumerate(self.node_types)}

    def edge_index_dict(self):
        if "edge_index_dict" not in self.cache:
            g = self.graph
            o = self.type_offsets
            perm = torch.argsort(g.edge_type)
            counts = torch.bincount(g.edge_type, minlength=g.num_etypes)
            src = g.edge_index[0][perm]
            dst = g.edge_index[1][perm]
            d = {}
            start = 0
            for r, c in enumerate(counts.tolist()):
                s_t, _, d_t = self.edge_types[r]
                si = self.node_types.index(s_t)
                di = self.node_types.index(d_t)
                d[self.edge_types[r]] = torch.stack(
                    [src[start:start + c] - o[si], dst[start:start + c] - o[di]])
                start += c
            self.cache["edge_index_dict"] = d
        return self.cache["edge_index_dict"]

    def hector_graph(self):
        if "hector_graph" not in self.cache:
            self.cache["hector_graph"] = self.graph.as_graph()
        return self.cache["hector_graph"]


def _randomize(module, seed, dim):
    """Random values for every parameter, N(0, 1/dim) (PyG initialises some
    to 0 or 1, which would hide mistakes), drawn on the CPU from `seed`."""
    gen = torch.Generator().manual_seed(seed)
    std = 1.0 / math.sqrt(dim)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * std)


def _relation_types(g):
    """(src type, dst type) of every relation, read off its first edge;
    (0, 0) for a relation without edges (only at tiny --scale)."""
    nt = g.node_type
    R = g.num_etypes
    first = torch.full((R,), -1, dtype=torch.int64, device=g.device)
    if g.num_edges:
        e = torch.arange(g.num_edges, device=g.device)
        first = first.scatter_reduce(0, g.edge_type, e, reduce="amin",
                                     include_self=False)
    idx = first.clamp(min=0)
    if g.num_edges:
        st = nt[g.edge_index[0, idx]].tolist()
        dt = nt[g.edge_index[1, idx]].tolist()
    else:
        st = dt = [0] * R
    out = [(s, d) if f >= 0 else (0, 0)
           for f, s, d in zip(first.tolist(), st, dt)]
    return out


def make_problem(dataset, model, graph, dim, heads, device, seed=0):
    """Builds the PyG module with random weights and the inputs."""
    from torch_geometric.nn import HGTConv, RGATConv, RGCNConv

    device = torch.device(device)
    g = graph
    N, R = g.num_nodes, g.num_etypes
    if dim % heads:
        raise ValueError(f"--dim {dim} is not a multiple of --heads {heads}")
    gen = torch.Generator().manual_seed(seed + 1000)
    x = torch.randn(N, dim, generator=gen).to(device)
    kw = {}
    if model == "rgcn":
        conv = RGCNConv(dim, dim, R, aggr="mean")
        names = ("weight", "root", "bias")
    elif model == "rgat":
        conv = RGATConv(dim, dim // heads, R, heads=heads,
                        attention_mechanism="across-relation",
                        attention_mode="additive-self-attention", dim=1,
                        concat=True)
        # w, l1, b1, l2, b2 only serve RGATConv's `mod` variants.
        names = ("weight", "q", "k", "bias")
    elif model == "hgt":
        nt = g.node_type
        if N and bool((nt[1:] < nt[:-1]).any()):
            raise ValueError("hgt needs nodes in contiguous blocks by type")
        counts = torch.bincount(nt, minlength=g.num_ntypes).tolist()
        offsets = [0]
        for c in counts:
            offsets.append(offsets[-1] + c)
        node_types = [f"t{i}" for i in range(g.num_ntypes)]
        rel = _relation_types(g)
        edge_types = [(f"t{s}", f"r{r}", f"t{d}")
                      for r, (s, d) in enumerate(rel)]
        conv = HGTConv(dim, dim, (node_types, edge_types), heads=heads)
        names = tuple(n for n, _ in conv.named_parameters())
        dst = sorted({d for _, d in rel})
        dst_types = [node_types[i] for i in dst]
        mask = torch.zeros(N, dtype=torch.bool)
        for i in dst:
            mask[offsets[i]:offsets[i + 1]] = True
        kw = dict(node_types=node_types, edge_types=edge_types,
                  type_offsets=offsets, dst_types=dst_types,
                  row_mask=mask.to(device))
    else:
        raise ValueError(f"unknown model {model!r}; known: {MODELS}")
    _randomize(conv, seed + 1, dim)
    conv = conv.to(device)
    rows = int(kw["row_mask"].sum()) if "row_mask" in kw else N
    target = torch.randn(rows, dim, generator=gen).to(device)
    return Problem(dataset=dataset, model=model, graph=g, device=device,
                   dim=dim, heads=heads, x=x, target=target, conv=conv,
                   weight_names=names, **kw)


def floor_bytes(prob, mode):
    """The fewest bytes a case must move through DRAM (fp32 features and
    weights, graph arrays as given: int64).

    Common terms (N nodes, E edges, d = --dim, W = bytes of the weights
    the model uses, i.e. sum of numel * 4 over Problem.weights()):
      graph  rgcn, rgat: edge_index + edge_type = 3 * E * 8
             hgt:        the same + node_type = 3 * E * 8 + N * 8
      x      N * d * 4
      out    rows * d * 4   (rows = N for rgcn/rgat, dst-type rows for hgt)
    rgcn:  W = (R * d * d + d * d + d) * 4          (weight, root, bias)
    rgat:  W = (R * d * H*C + 2 * H*C * H + H*C) * 4  (weight, q, k, bias;
           H = heads, C = d / H)
    hgt:   W = (T * (3d*d + 3d + d*d + d + 1) + R * (2 * H * C * C + H)) * 4
           (kqv, out_lin, skip per node type; k_rel, v_rel, p_rel per
           relation)
    inference floor = graph + x + W + out          (read once, write once)
    training floor  = graph + x + target (= out) + W  read once
                      + W written once (the weight gradients); the output,
                      its gradient and all intermediates may stay on chip,
                      so they are not counted (a lower bound).
    """
    g = prob.graph
    N, E = g.num_nodes, g.num_edges
    graph = 3 * E * 8 + (N * 8 if prob.model == "hgt" else 0)
    x = N * prob.dim * 4
    rows = prob.target.shape[0]
    out = rows * prob.out_dim * 4
    w = sum(p.numel() * p.element_size() for p in prob.weights())
    if mode == "inference":
        return graph + x + w + out
    return graph + x + out + 2 * w

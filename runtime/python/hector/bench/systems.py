"""The registry of benchmarked systems.

A system is a :class:`System`: a name, a family ("baseline" or "hector"),
the models it runs, and ``prepare(problem) -> Prepared``. ``prepare`` does
all per-graph preprocessing (sorting, index building, compilation set-up)
outside the timed region and returns ``Prepared(forward, params)``:
``forward()`` computes the model's output in the problem's output layout
(see problem.py) from ``problem.x`` and the shared weights; ``params`` are
the tensors that receive gradients in a training step (the shared PyG
weights, or views of them).

Systems registered here:
  baselines  pyg-rgcn, pyg-fastrgcn, pyg-rgat, pyg-hgt (eager) and their
             "-compile" variants (torch.compile; recorded as failed where
             torch.compile is missing or raises), segmm-rgcn (plain PyTorch
             segment-MM RGCN, as DGL's segment_mm does).
  hector     hector-interpreter: the bundled *_pyg models run by the IR
             interpreter (hector.interpret). It is the numerical oracle,
             NOT the compiled kernels.

Where Hector's compiled kernels plug in (issue 7 and later): register one
System per variant with family "hector", e.g.

    register(System("hector-unopt", "hector", ("rgcn", "rgat", "hgt"),
                    prepare_compiled(flags=("-fno-compact", "-fno-reorder"))))
    ... "hector-C", "hector-R", "hector-C+R" ...

and add them to HECTOR_COMPILED below. The table's "best Hector" column is
the fastest successful system of family "hector" for each case, so the
"best" variant needs no separate run.
"""

from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, List, Tuple

import torch

__all__ = ["System", "Prepared", "SYSTEMS", "register", "REFERENCE",
           "systems_for", "HECTOR_COMPILED", "default_systems"]


@dataclass
class Prepared:
    forward: Callable[[], torch.Tensor]
    params: List[torch.Tensor]


@dataclass
class System:
    name: str
    family: str                 # "baseline" or "hector"
    models: Tuple[str, ...]
    prepare: Callable           # (Problem) -> Prepared
    description: str = ""


SYSTEMS: "OrderedDict[str, System]" = OrderedDict()

# The PyG system whose output every other system is checked against.
REFERENCE = {"rgcn": "pyg-rgcn", "rgat": "pyg-rgat", "hgt": "pyg-hgt"}

# Names of the compiled Hector variants, once they exist (issue 7+).
HECTOR_COMPILED: List[str] = []


def register(system, replace=False):
    if system.family not in ("baseline", "hector"):
        raise ValueError(f"system {system.name}: family must be 'baseline' "
                         f"or 'hector', got {system.family!r}")
    if system.name in SYSTEMS and not replace:
        raise ValueError(f"system {system.name} is already registered")
    SYSTEMS[system.name] = system
    return system


def systems_for(model, names):
    """The systems among `names` (in registry order) that run `model`; the
    model's reference system first."""
    chosen = [SYSTEMS[n] for n in SYSTEMS if n in names
              and model in SYSTEMS[n].models]
    chosen.sort(key=lambda s: s.name != REFERENCE.get(model))
    return chosen


def default_systems():
    return list(SYSTEMS)


# --------------------------------------------------------------------------
# PyG baselines
# --------------------------------------------------------------------------


def _maybe_compile(module, compile_):
    if not compile_:
        return module
    if not hasattr(torch, "compile"):
        raise NotImplementedError(
            f"torch.compile is not available in torch {torch.__version__}")
    return torch.compile(module)


def _pyg_homo(kind, compile_):
    def prepare(prob):
        g = prob.graph
        if kind == "fastrgcn":
            from torch_geometric.nn import FastRGCNConv
            conv = FastRGCNConv(prob.dim, prob.dim, g.num_etypes,
                                aggr="mean").to(prob.device)
            conv.load_state_dict(prob.conv.state_dict())
            # Share the very tensors, so training updates the same weights.
            conv.weight, conv.root, conv.bias = (prob.conv.weight,
                                                 prob.conv.root,
                                                 prob.conv.bias)
            params = prob.weights()
        else:
            conv = prob.conv
            params = prob.weights()
        fn = _maybe_compile(conv, compile_)
        ei, et, x = g.edge_index, g.edge_type, prob.x
        return Prepared(lambda: fn(x, ei, et), params)
    return prepare


def _pyg_hgt(compile_):
    def prepare(prob):
        fn = _maybe_compile(prob.conv, compile_)
        x_dict = prob.x_dict()
        eid = prob.edge_index_dict()
        dst = prob.dst_types

        def forward():
            out = fn(x_dict, eid)
            return torch.cat([out[t] for t in dst])
        return Prepared(forward, prob.weights())
    return prepare


for _kind, _model, _desc in (
        ("rgcn", "rgcn", "torch_geometric.nn.RGCNConv (aggr='mean')"),
        ("fastrgcn", "rgcn", "torch_geometric.nn.FastRGCNConv (aggr='mean')"),
        ("rgat", "rgat", "torch_geometric.nn.RGATConv (across-relation, "
                         "additive-self-attention)")):
    register(System(f"pyg-{_kind}", "baseline", (_model,),
                    _pyg_homo(_kind, False), _desc + ", eager"))
    register(System(f"pyg-{_kind}-compile", "baseline", (_model,),
                    _pyg_homo(_kind, True), _desc + ", torch.compile"))
register(System("pyg-hgt", "baseline", ("hgt",), _pyg_hgt(False),
                "torch_geometric.nn.HGTConv, eager"))
register(System("pyg-hgt-compile", "baseline", ("hgt",), _pyg_hgt(True),
                "torch_geometric.nn.HGTConv, torch.compile"))


# --------------------------------------------------------------------------
# Plain-PyTorch segment-MM RGCN
# --------------------------------------------------------------------------


def _segmm_rgcn(prob):
    """RGCN as DGL's segment_mm path computes it: edges sorted by type once
    (preprocessing, with the per-(dst, relation) mean norm c_e), then per
    forward: gather x[src] in sorted order, one matmul per relation over its
    contiguous segment, scale by c_e, index_add into the destinations, plus
    the root term x @ root + bias."""
    g = prob.graph
    R, N = g.num_etypes, g.num_nodes
    et = g.edge_type
    perm = torch.sort(et, stable=True).indices
    src = g.edge_index[0][perm].contiguous()
    dst = g.edge_index[1][perm].contiguous()
    ets = et[perm]
    counts = torch.bincount(ets, minlength=R).tolist()
    # c_e = 1 / |N_r(v)|: in-degree of dst within relation r.
    key = dst * R + ets
    uniq, inv, cnt = torch.unique(key, return_inverse=True,
                                  return_counts=True)
    norm = (1.0 / cnt.to(prob.x.dtype))[inv].unsqueeze(1).contiguous()
    segments = []
    start = 0
    for r, c in enumerate(counts):
        if c:
            segments.append((r, start, start + c))
        start += c
    conv = prob.conv
    W, root, bias, x = conv.weight, conv.root, conv.bias, prob.x

    def forward():
        xs = x.index_select(0, src)
        msg = torch.cat([xs[a:b] @ W[r] for r, a, b in segments]) \
            if segments else xs.new_zeros(0, W.shape[2])
        h = torch.addmm(bias, x, root)
        return h.index_add(0, dst, msg * norm)
    return Prepared(forward, prob.weights())


register(System("segmm-rgcn", "baseline", ("rgcn",), _segmm_rgcn,
                "plain PyTorch segment-MM RGCN (edges sorted by type, one "
                "matmul per relation, index_add)"))


# --------------------------------------------------------------------------
# Hector: the IR interpreter (the compiled kernels come later)
# --------------------------------------------------------------------------


def _generated_ir(name):
    import os

    from .._ext import _REPO_ROOT
    return os.path.join(_REPO_ROOT, "generated", name, f"{name}.inter.ir")


def _hgt_params(prob):
    """HGTConv's parameters in hgt_pyg's layout (differentiable views of the
    PyG parameters, as in tests/python/test_interpreter_pyg.py)."""
    conv, heads = prob.conv, prob.heads
    R, d = len(prob.edge_types), prob.dim // heads
    nts = prob.node_types

    def stack(lins, attr):
        return torch.stack([getattr(lins[t], attr) for t in nts])

    return {
        "kqv_weight": stack(conv.kqv_lin.lins, "weight"),
        "kqv_bias": stack(conv.kqv_lin.lins, "bias"),
        "k_rel": conv.k_rel.weight.view(heads, R, d, d).transpose(0, 1),
        "v_rel": conv.v_rel.weight.view(heads, R, d, d).transpose(0, 1),
        "p_rel": torch.cat([conv.p_rel["__".join(et)]
                            for et in prob.edge_types]),
        "out_lin_weight": stack(conv.out_lin.lins, "weight"),
        "out_lin_bias": stack(conv.out_lin.lins, "bias"),
        "skip": torch.cat([conv.skip[t] for t in nts]),
    }


def _hector_interpreter(prob):
    import hector

    module = hector.load_module(_generated_ir(f"{prob.model}_pyg"))
    graph = prob.hector_graph()
    conv, x, dim, heads = prob.conv, prob.x, prob.dim, prob.heads
    if prob.model == "rgcn":
        hypers = {"in_dim": dim, "out_dim": dim}

        def params():
            return {"weight_": conv.weight, "root": conv.root,
                    "bias": conv.bias}
    elif prob.model == "rgat":
        hypers = {"in_dim": dim, "out_dim": dim // heads, "heads": heads}

        def params():
            return {"weight_": conv.weight, "q": conv.q, "k": conv.k,
                    "bias": conv.bias}
    else:
        hypers = {"in_dim": dim, "heads": heads}

        def params():  # views rebuilt per call, so gradients reach conv
            return _hgt_params(prob)
    mask = prob.row_mask
    if mask is not None and bool(mask.all()):
        mask = None

    def forward():
        h = hector.interpret(module, graph, {"x": x}, params(), hypers)["h"]
        return h if mask is None else h[mask]
    return Prepared(forward, prob.weights())


register(System("hector-interpreter", "hector", ("rgcn", "rgat", "hgt"),
                _hector_interpreter,
                "Hector IR interpreter on models/*_pyg.hgnn (reference "
                "lowering, not the compiled kernels)"))

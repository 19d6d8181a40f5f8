"""The registry of benchmarked systems.

A system is a :class:`System`: a name, a family ("baseline", "hector", or
"oracle" for the IR interpreter, which is timed but counts on neither side),
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
  hector     hector: the bundled *_pyg models through the PyG drop-ins
             hector.nn.RGCNConv / RGATConv / HGTConv, which load the
             problem's PyG state_dict (Hector's best, as a user runs it);
             hector-u, hector-c, hector-r, hector-cr: the optimisation
             ablation, each the *_pyg model compiled with some of hectorc's
             optimisations off (u: -fno-reorder -fno-compact;
             c: -fno-reorder; r: -fno-compact; cr: all on, the bundled
             library) and run by LayerLibrary.run on the shared PyG weights;
             hector-interpreter: the bundled *_pyg models run by the IR
             interpreter (hector.interpret), the numerical oracle, NOT the
             compiled kernels.

The u, c and r libraries come from bench/variants/<model>_pyg_<v>/
(scripts/bench-variants.sh) and are built only with
-DHECTOR_BUILD_BENCH_VARIANTS=ON (scripts/gpu-bench.sh sets it). A system
whose library is not built raises :class:`Unavailable` from ``prepare``; the
runner records it as status "unavailable" and goes on.

The table's "best Hector" column is the fastest successful system of family
"hector" for each case, so the best variant needs no separate run.
"""

import os
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, List, Tuple

import torch

__all__ = ["System", "Prepared", "SYSTEMS", "register", "REFERENCE",
           "systems_for", "HECTOR_COMPILED", "VARIANTS", "Unavailable",
           "default_systems"]


class Unavailable(Exception):
    """Raised by a system's ``prepare`` when the system cannot run in this
    build (its library is not built); recorded as status "unavailable",
    not as a failure."""


@dataclass
class Prepared:
    forward: Callable[[], torch.Tensor]
    params: List[torch.Tensor]


@dataclass
class System:
    name: str
    family: str                 # "baseline", "hector" or "oracle"
    models: Tuple[str, ...]
    prepare: Callable           # (Problem) -> Prepared
    description: str = ""


SYSTEMS: "OrderedDict[str, System]" = OrderedDict()

# The PyG system whose output every other system is checked against.
REFERENCE = {"rgcn": "pyg-rgcn", "rgat": "pyg-rgat", "hgt": "pyg-hgt"}

# The compiled Hector systems (hector.nn drop-ins, then the ablation).
HECTOR_COMPILED: List[str] = ["hector", "hector-u", "hector-c", "hector-r",
                              "hector-cr"]


def register(system, replace=False):
    if system.family not in ("baseline", "hector", "oracle"):
        raise ValueError(f"system {system.name}: family must be 'baseline', "
                         f"'hector' or 'oracle', got {system.family!r}")
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


def _dst_rows(dst):
    """A function from an HGTConv's output dict to the problem's output
    rows: the destination types `dst`' rows in order, concatenated (a view
    without the copy when they already lie so in one buffer, as hector.nn's
    split output does for most graphs here; PyG's are separate tensors).
    Resolved once, before the timed calls."""
    from ..nn import rows_together
    return lambda out: rows_together([out[t] for t in dst])


def _pyg_hgt(compile_):
    def prepare(prob):
        fn = _maybe_compile(prob.conv, compile_)
        x_dict = prob.x_dict()
        eid = prob.edge_index_dict()
        rows = _dst_rows(prob.dst_types)

        def forward():
            return rows(fn(x_dict, eid))
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
    R = g.num_etypes
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
    from .._ext import _REPO_ROOT
    return os.path.join(_REPO_ROOT, "generated", name, f"{name}.inter.ir")


def _hypers(prob):
    """The *_pyg model's hyper-parameters for the problem."""
    dim, heads = prob.dim, prob.heads
    if prob.model == "rgcn":
        return {"in_dim": dim, "out_dim": dim}
    if prob.model == "rgat":
        return {"in_dim": dim, "out_dim": dim // heads, "heads": heads,
                "slope": float(prob.conv.negative_slope)}
    return {"in_dim": dim, "heads": heads}


def _model_values(prob):
    """The shared PyG weights as the *_pyg model's params, by layer.json
    argument name: PyG's names, with `weight` -> `weight_` (a keyword of the
    .hgnn language) for rgcn and rgat, and HGTConv's per-type modules
    stacked for hgt (models/*_pyg.hgnn's header comments give the mapping).
    Differentiable views, rebuilt per call, so gradients reach prob.conv."""
    conv = prob.conv
    if prob.model == "rgcn":
        return {"weight_": conv.weight, "root": conv.root, "bias": conv.bias}
    if prob.model == "rgat":
        return {"weight_": conv.weight, "q": conv.q, "k": conv.k,
                "bias": conv.bias}
    from ..nn import hgt_pyg_params
    return hgt_pyg_params(conv, prob.node_types, prob.edge_types, prob.heads)


def _output_rows(prob):
    """A function from a layer's [N, out] output to the problem's output
    rows (``row_mask``): the output itself when every row is one, a view
    when they are one run of rows, else the runs copied together. The
    synthetic graphs number the nodes by type, so the destination types'
    rows are a few runs (mag: two), found here before the timed calls.
    Indexing by the mask in the call cost a nonzero (a device-to-host sync)
    and a gather: 0.5 ms of mag's HGT inference step on an H200
    (docs/perf-notes.md section 95)."""
    mask = prob.row_mask
    if mask is None or bool(mask.all()):
        return lambda h: h
    rows = mask.nonzero().squeeze(1).cpu()
    if rows.numel() == 0:
        return lambda h: h[:0]
    # [first, last + 1) of each run of consecutive rows.
    breaks = torch.nonzero(rows[1:] != rows[:-1] + 1).squeeze(1) + 1
    firsts = torch.cat([torch.zeros(1, dtype=breaks.dtype), breaks])
    lasts = torch.cat([breaks, torch.tensor([rows.numel()])]) - 1
    runs = list(zip(rows[firsts].tolist(), (rows[lasts] + 1).tolist()))
    if len(runs) == 1:
        lo, hi = runs[0]
        return lambda h: h[lo:hi]
    return lambda h: torch.cat([h[lo:hi] for lo, hi in runs])


def _hector_interpreter(prob):
    import hector

    module = hector.load_module(_generated_ir(f"{prob.model}_pyg"))
    graph = prob.hector_graph()
    x, hypers, rows = prob.x, _hypers(prob), _output_rows(prob)
    hypers.pop("slope", None)  # the interpreter takes the model's default

    def forward():
        return rows(hector.interpret(module, graph, {"x": x},
                                     _model_values(prob), hypers)["h"])
    return Prepared(forward, prob.weights())


register(System("hector-interpreter", "oracle", ("rgcn", "rgat", "hgt"),
                _hector_interpreter,
                "Hector IR interpreter on models/*_pyg.hgnn (reference "
                "lowering, not the compiled kernels)"))


# --------------------------------------------------------------------------
# Hector: the compiled kernels
# --------------------------------------------------------------------------

# The optimisation variants: suffix -> what hectorc ran with. "cr" is the
# bundled generated/<model>_pyg/; the others are bench/variants/<model>_pyg_<v>/
# (scripts/bench-variants.sh holds the same table).
VARIANTS = OrderedDict([
    ("u", "-fno-reorder -fno-compact (unoptimised; fusion on)"),
    ("c", "-fno-reorder (compact materialization only)"),
    ("r", "-fno-compact (linear operator reordering only)"),
    ("cr", "all optimisations (the bundled library)"),
])

_VARIANT_LIBRARIES = {}


def variant_library(model, variant):
    """The hector.LayerLibrary of `model` ("rgcn", "rgat", "hgt") compiled as
    `variant` (a key of VARIANTS); Unavailable when its library is not
    built.

    The cr variant is the bundled model (hector.models). The others live in
    bench/variants/<model>_pyg_<v>/ and are built by the main build, so
    their libraries are in $HECTOR_BUILD_DIR/lib, where hector.load looks
    for the bundled models only; the LayerLibrary is therefore constructed
    with that search (bundled=True) and cached here, as load() would."""
    from .. import _ext

    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; known: "
                         f"{list(VARIANTS)}")
    if variant == "cr":
        from .. import models
        try:
            return models.get(f"{model}_pyg")
        except (FileNotFoundError, ImportError) as exc:
            raise Unavailable(f"hector_{model}_pyg is not loadable: "
                              + " ".join(str(exc).split())) from None
    name = f"{model}_pyg_{variant}"
    directory = os.path.join(_ext._REPO_ROOT, "bench", "variants", name)
    key = os.path.realpath(directory)
    if key not in _VARIANT_LIBRARIES:
        from ..layers import LayerLibrary
        if not os.path.isfile(os.path.join(directory, "layer.json")):
            raise Unavailable(f"{name}: {directory} has no layer.json (run "
                              "scripts/bench-variants.sh)")
        try:
            _VARIANT_LIBRARIES[key] = LayerLibrary(directory, bundled=True)
        except FileNotFoundError:
            raise Unavailable(
                f"libhector_{name}.so is not built (configure with "
                f"-DHECTOR_BUILD_BENCH_VARIANTS=ON and build hector_{name}, "
                "as scripts/gpu-bench.sh does; looked in "
                f"{os.path.join(_ext.build_dir(), 'lib')} and "
                f"{directory})") from None
        except ImportError as exc:
            raise Unavailable(f"{name}: {exc}") from None
    return _VARIANT_LIBRARIES[key]


def _contiguous(t):
    return t if t.is_contiguous() else t.contiguous()


def _hector_variant(variant):
    """LayerLibrary.run of the variant's library on the shared PyG weights
    (the same path for every variant, so they differ only in kernels)."""
    def prepare(prob):
        lib = variant_library(prob.model, variant)
        graph = prob.hector_graph()
        x, hypers, rows = prob.x, _hypers(prob), _output_rows(prob)
        expected = set(lib.inputs) | set(lib.params)
        got = {"x"} | set(_model_values(prob))
        if got != expected:
            raise ValueError(f"{lib.name}: arguments {sorted(expected)} but "
                             f"the bench maps {sorted(got)}")

        def forward():
            values = {k: _contiguous(v)
                      for k, v in _model_values(prob).items()}
            values["x"] = x
            return rows(lib.run(graph, values, **hypers)["h"])
        return Prepared(forward, prob.weights())
    return prepare


def _hector_nn(prob):
    """The PyG drop-in of hector.nn, built like the problem's PyG module and
    loaded with its state_dict; called as PyG's module is called."""
    from .. import nn as hnn

    # The library is loaded first, outside the timed region; a missing one
    # makes the system unavailable rather than failed.
    variant_library(prob.model, "cr")
    conv, dim, heads, g = prob.conv, prob.dim, prob.heads, prob.graph
    if prob.model == "rgcn":
        mod = hnn.RGCNConv(dim, dim, g.num_etypes, aggr="mean")
    elif prob.model == "rgat":
        mod = hnn.RGATConv(dim, dim // heads, g.num_etypes, heads=heads,
                           attention_mechanism=conv.attention_mechanism,
                           attention_mode=conv.attention_mode, dim=conv.dim,
                           concat=conv.concat,
                           negative_slope=conv.negative_slope)
    else:
        mod = hnn.HGTConv(dim, dim, (prob.node_types, prob.edge_types),
                          heads=heads)
    mod = mod.to(prob.device)
    mod.load_state_dict(conv.state_dict())
    named = dict(mod.named_parameters())
    params = [named[n] for n in prob.weight_names]
    if prob.model == "hgt":
        x_dict, eid = prob.x_dict(), prob.edge_index_dict()
        rows = _dst_rows(prob.dst_types)

        def forward():
            return rows(mod(x_dict, eid))
    else:
        ei, et, x = g.edge_index, g.edge_type, prob.x

        def forward():
            return mod(x, ei, et)
    return Prepared(forward, params)


register(System("hector", "hector", ("rgcn", "rgat", "hgt"), _hector_nn,
                "hector.nn.RGCNConv / RGATConv / HGTConv (the bundled *_pyg "
                "models, all optimisations) loading the PyG state_dict"))
for _v, _desc in VARIANTS.items():
    register(System(f"hector-{_v}", "hector", ("rgcn", "rgat", "hgt"),
                    _hector_variant(_v),
                    f"the *_pyg model compiled with {_desc}"))

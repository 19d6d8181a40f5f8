"""hector.nn's RGCNConv, RGATConv and HGTConv against torch_geometric's
layers holding the same (randomised) parameters: state_dict keys and
shapes, outputs and the gradients of the input and of every parameter (fp32,
rel err <= 1e-5), PyG's initialisation, the graph cache, and the errors for
bad input and unsupported options."""

import copy

import pytest
import torch

from conftest import (assert_close, random_graph, random_typed_graph,
                      randomize_parameters)

pyg = pytest.importorskip(
    "torch_geometric", reason="torch_geometric is not installed (see "
    "scripts/setup.sh for the pip command)")
import torch_geometric.nn as pyg_nn  # noqa: E402

import hector.nn as hnn  # noqa: E402

IN_DIM, OUT_DIM = 6, 4
DTYPE = torch.float32


@pytest.fixture(autouse=True)
def no_segment_matmul():
    """PyG's plain loops (its segment-matmul path needs pyg_lib)."""
    old = pyg.backend.use_segment_matmul
    pyg.backend.use_segment_matmul = False
    yield
    pyg.backend.use_segment_matmul = old


def _x(n, dim, device, seed=7):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, dim, generator=gen, dtype=torch.float64).to(
        dtype=DTYPE, device=device).requires_grad_()


def _layout(module):
    return [(k, tuple(v.shape)) for k, v in module.state_dict().items()]


def _pair(theirs, ours, device, seed):
    """Randomises the PyG layer, copies it into ours through state_dict and
    moves both to `device`; checks the state_dict layouts agree and that
    the copy goes back into PyG."""
    randomize_parameters(theirs, seed)
    ours.load_state_dict(theirs.state_dict())
    assert _layout(ours) == _layout(theirs)
    assert [n for n, _ in ours.named_parameters()] == \
        [n for n, _ in theirs.named_parameters()]
    copy.deepcopy(theirs).load_state_dict(ours.state_dict())
    return theirs.to(device), ours.to(device)


def _compare(theirs, ours, run, x, what):
    """run(module) -> output tensor, for each layer; compares the outputs
    and the gradients of a random projection of them w.r.t. x and every
    parameter (by name). Returns the number of gradients compared."""
    out_a, out_b = run(ours), run(theirs)
    assert_close(out_a, out_b, DTYPE, f"{what}: forward")
    gen = torch.Generator().manual_seed(1)
    probe = torch.randn(out_b.shape, generator=gen, dtype=torch.float64).to(
        device=out_b.device, dtype=out_b.dtype)
    names = [n for n, _ in theirs.named_parameters()]
    leaves_a = [x] + [p for _, p in ours.named_parameters()]
    leaves_b = [x] + [p for _, p in theirs.named_parameters()]
    # retain_graph: both outputs may share the graph that made x's pieces.
    grads_a = torch.autograd.grad((out_a * probe).sum(), leaves_a,
                                  allow_unused=True, retain_graph=True)
    grads_b = torch.autograd.grad((out_b * probe).sum(), leaves_b,
                                  allow_unused=True)
    for name, t, ga, gb in zip(["x"] + names, leaves_b, grads_a, grads_b):
        ga = torch.zeros_like(t) if ga is None else ga
        gb = torch.zeros_like(t) if gb is None else gb
        assert_close(ga, gb, DTYPE, f"{what}: d/d {name}")
    return len(leaves_a)


RGCN_CASES = {
    "plain": {},
    "bases": {"num_bases": 2},
    "blocks": {"num_blocks": 2},
    "no_root": {"root_weight": False},
    "no_bias": {"bias": False},
    "sorted_flag": {"is_sorted": True},
}


@pytest.mark.parametrize("case", list(RGCN_CASES))
def test_rgcn_matches_pyg(case, device):
    kw = RGCN_CASES[case]
    g = random_graph(seed=11, device=device)
    theirs, ours = _pair(
        pyg_nn.RGCNConv(IN_DIM, OUT_DIM, g.num_etypes, aggr="mean", **kw),
        hnn.RGCNConv(IN_DIM, OUT_DIM, g.num_etypes, **kw), device, 1)
    x = _x(g.num_nodes, IN_DIM, device)
    n = _compare(theirs, ours, lambda m: m(x, g.edge_index, g.edge_type), x,
                 f"RGCNConv {case}")
    assert n == 1 + len(list(theirs.parameters()))


RGAT_CASES = {
    "heads1": {},
    "heads2": {"heads": 2},
    "heads2_mean": {"heads": 2, "concat": False},
    "bases": {"num_bases": 2},
    "blocks": {"num_blocks": 2, "heads": 2},
    "no_bias_slope": {"bias": False, "negative_slope": 0.1},
    "dropout_eval": {"dropout": 0.5},
}


@pytest.mark.parametrize("case", list(RGAT_CASES))
def test_rgat_matches_pyg(case, device):
    kw = RGAT_CASES[case]
    g = random_graph(seed=12, device=device)
    theirs, ours = _pair(
        pyg_nn.RGATConv(IN_DIM, OUT_DIM, g.num_etypes, **kw),
        hnn.RGATConv(IN_DIM, OUT_DIM, g.num_etypes, **kw), device, 2)
    if kw.get("dropout"):
        theirs.eval()
        ours.eval()
    x = _x(g.num_nodes, IN_DIM, device)
    _compare(theirs, ours, lambda m: m(x, g.edge_index, g.edge_type), x,
             f"RGATConv {case}")


def _hetero(g, x):
    """The flattened typed graph as PyG's dicts: (node types, edge types,
    x_dict, edge_index_dict)."""
    node_types = [f"t{i}" for i in range(g.num_ntypes)]
    edge_types = [(f"t{s}", f"r{r}", f"t{d}")
                  for r, (s, d) in enumerate(g.rel_types)]
    nt = g.node_type
    offsets = {t: int((nt < i).sum()) for i, t in enumerate(node_types)}
    x_dict = {t: x[nt == i] for i, t in enumerate(node_types)}
    edge_index_dict = {}
    for r, (s, _, d) in enumerate(edge_types):
        mask = g.edge_type == r
        edge_index_dict[edge_types[r]] = torch.stack(
            [g.src[mask] - offsets[s], g.dst[mask] - offsets[d]])
    return node_types, edge_types, x_dict, edge_index_dict


HGT_CASES = {
    # every edge type in edge_index_dict; the last has no edges
    "all": {},
    # the edge type without edges left out of edge_index_dict
    "omit_empty": {"omit_empty": True},
    # node type t2 (and its edge types) absent from both dicts
    "subset": {"drop_type": "t2"},
    # in_channels as a dict
    "in_dict": {"in_dict": True},
}


@pytest.mark.parametrize("case", list(HGT_CASES))
@pytest.mark.parametrize("heads", [1, 2])
def test_hgt_matches_pyg(case, heads, device):
    opt = HGT_CASES[case]
    g = random_typed_graph(seed=13, device=device)
    x = _x(g.num_nodes, OUT_DIM, device)
    node_types, edge_types, x_dict, edge_index_dict = _hetero(g, x)
    in_channels = {t: OUT_DIM for t in reversed(node_types)} \
        if opt.get("in_dict") else OUT_DIM
    theirs, ours = _pair(
        pyg_nn.HGTConv(in_channels, OUT_DIM, (node_types, edge_types),
                       heads=heads),
        hnn.HGTConv(in_channels, OUT_DIM, (node_types, edge_types),
                    heads=heads), device, 3)
    if opt.get("omit_empty"):
        del edge_index_dict[edge_types[-1]]
    if "drop_type" in opt:
        t = opt["drop_type"]
        del x_dict[t]
        edge_index_dict = {et: ei for et, ei in edge_index_dict.items()
                           if t not in (et[0], et[2])}

    def run(m):
        out = m(x_dict, edge_index_dict)
        if m is ours:
            expected = list(theirs(x_dict, edge_index_dict))
            assert list(out) == expected
        return torch.cat(list(out.values()))

    n = _compare(theirs, ours, run, x, f"HGTConv heads={heads} {case}")
    assert n == 1 + len(list(theirs.parameters()))


def test_hgt_on_row_slices_of_one_matrix_matches_separate_tensors(
        device, monkeypatch):
    """x_dict as consecutive row slices of one x (as a stacked model's
    previous HGTConv returns them) takes the path without the copy of x
    (hector.nn.rows_together); outputs and the gradients of x and of every
    parameter are those of x_dict as separate tensors."""
    g = random_typed_graph(seed=13, device=device)
    x = _x(g.num_nodes, OUT_DIM, device)
    node_types, edge_types, copies, edge_index_dict = _hetero(g, x)
    sizes = [v.size(0) for v in copies.values()]
    slices = dict(zip(node_types, x.split(sizes)))
    make = lambda: hnn.HGTConv(OUT_DIM, OUT_DIM,  # noqa: E731
                               (node_types, edge_types), heads=2)
    torch.manual_seed(0)
    on_copies = make().to(device)
    on_slices = copy.deepcopy(on_copies)
    spans = []
    real = hnn._consecutive_view
    monkeypatch.setattr(hnn, "_consecutive_view",
                        lambda blocks: spans.append(real(blocks)) or spans[-1])
    out_c = torch.cat(list(on_copies(copies, edge_index_dict).values()))
    out_s = torch.cat(list(on_slices(slices, edge_index_dict).values()))
    # x was copied from the masked copies and spanned without a copy from
    # the slices.
    assert spans[0] is None and spans[1].data_ptr() == x.data_ptr()
    assert_close(out_s, out_c, DTYPE, "forward on slices")
    probe = torch.randn_like(out_c)
    leaves_c = [x] + list(on_copies.parameters())
    leaves_s = [x] + list(on_slices.parameters())
    grads_c = torch.autograd.grad((out_c * probe).sum(), leaves_c,
                                  allow_unused=True)
    grads_s = torch.autograd.grad((out_s * probe).sum(), leaves_s,
                                  allow_unused=True)
    for i, (gc, gs) in enumerate(zip(grads_c, grads_s)):
        assert (gc is None) == (gs is None), i
        if gc is not None:
            assert_close(gs, gc, DTYPE, f"gradient {i} on slices")


def test_rows_together_views_consecutive_rows_and_copies_others():
    base = torch.arange(24.0).view(8, 3)
    a, b, c = base[1:3], base[3:4], base[4:7]
    empty = base.new_empty(0, 3)
    together = hnn.rows_together([a, empty, b, c])
    assert torch.equal(together, base[1:7])
    assert together.data_ptr() == a.data_ptr()  # a view, no copy
    # Out of order, with a gap, or from two buffers: copied.
    for blocks in ([b, a], [a, c], [a, base.clone()[3:4]]):
        out = hnn.rows_together(blocks)
        assert torch.equal(out, torch.cat(blocks))
        assert out.data_ptr() != blocks[0].data_ptr()
    # A transposed (column-major) block is no run of rows.
    t = torch.arange(6.0).view(3, 2).t()
    assert torch.equal(hnn.rows_together([t[:1], t[1:]]), t)


def test_rows_together_keeps_the_gradients_of_torch_cat():
    leaf = torch.randn(6, 2, requires_grad=True)
    mid = leaf * 2  # a base with a history
    for base in (leaf, mid):
        blocks = list(base.split([2, 4]))
        together = hnn.rows_together(blocks)
        assert together.data_ptr() == blocks[0].data_ptr()
        (g_view,) = torch.autograd.grad((together ** 2).sum(), leaf,
                                        retain_graph=True)
        (g_cat,) = torch.autograd.grad((torch.cat(blocks) ** 2).sum(), leaf)
        assert torch.equal(g_view, g_cat)
    # Slices taken under no_grad are leaves that lead nowhere: copied, and
    # the gradient does not reach the base, as with torch.cat.
    with torch.no_grad():
        blocks = [leaf[0:2], leaf[2:6]]
    together = hnn.rows_together(blocks)
    assert together.data_ptr() != leaf.data_ptr()
    assert torch.equal(together, leaf.detach())
    together.sum().backward()
    assert leaf.grad is None


LAYERS = {
    "rgcn": lambda: (pyg_nn.RGCNConv(IN_DIM, OUT_DIM, 3),
                     hnn.RGCNConv(IN_DIM, OUT_DIM, 3)),
    "rgcn_bases": lambda: (pyg_nn.RGCNConv(IN_DIM, OUT_DIM, 3, num_bases=2),
                           hnn.RGCNConv(IN_DIM, OUT_DIM, 3, num_bases=2)),
    "rgat": lambda: (pyg_nn.RGATConv(IN_DIM, OUT_DIM, 3, heads=2),
                     hnn.RGATConv(IN_DIM, OUT_DIM, 3, heads=2)),
    "rgat_bases": lambda: (pyg_nn.RGATConv(IN_DIM, OUT_DIM, 3, num_bases=2),
                           hnn.RGATConv(IN_DIM, OUT_DIM, 3, num_bases=2)),
    "hgt": lambda: tuple(
        cls(OUT_DIM, OUT_DIM, (["a", "b"], [("a", "r", "b"),
                                            ("b", "s", "a")]), heads=2)
        for cls in (pyg_nn.HGTConv, hnn.HGTConv)),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_reset_parameters_like_pyg(name):
    """Seeded, reset_parameters() draws PyG's values: same init functions,
    same order. (RGATConv's l2 is left out: PyG never initialises it.)"""
    theirs, ours = LAYERS[name]()
    assert _layout(ours) == _layout(theirs)
    torch.manual_seed(5)
    theirs.reset_parameters()
    torch.manual_seed(5)
    ours.reset_parameters()
    a, b = ours.state_dict(), theirs.state_dict()
    for key in b:
        if key != "l2":
            assert torch.equal(a[key], b[key]), key
    # Freshly built, every parameter is set (finite), none left empty.
    fresh = LAYERS[name]()[1]
    for key, v in fresh.state_dict().items():
        assert torch.isfinite(v).all(), key


def test_rgat_l2_initialised_as_pyg_intends():
    ours = hnn.RGATConv(IN_DIM, OUT_DIM, 3)
    assert torch.equal(ours.l2, torch.full((OUT_DIM, OUT_DIM), 1 / OUT_DIM))


def test_graph_is_cached_and_rebuilt_on_change(device):
    g = random_graph(seed=11, device=device)
    theirs, ours = _pair(pyg_nn.RGCNConv(IN_DIM, OUT_DIM, g.num_etypes),
                         hnn.RGCNConv(IN_DIM, OUT_DIM, g.num_etypes),
                         device, 1)
    x = _x(g.num_nodes, IN_DIM, device)
    edge_index, edge_type = g.edge_index.clone(), g.edge_type.clone()
    ours(x, edge_index, edge_type)
    first = ours._graph_cache._graph
    ours(x, edge_index, edge_type)
    assert ours._graph_cache._graph is first
    # An equal but distinct tensor, and an in-place change, rebuild it.
    ours(x, edge_index, edge_type.clone())
    assert ours._graph_cache._graph is not first
    second = ours._graph_cache._graph
    edge_type[edge_type == 0] = g.num_etypes - 1
    out = ours(x, edge_index, edge_type)
    assert ours._graph_cache._graph is not second
    assert_close(out, theirs(x, edge_index, edge_type), DTYPE,
                 "after edge_type changed in place")
    # Copies start with an empty cache.
    assert copy.deepcopy(ours)._graph_cache._graph is None


def test_graph_cache_sees_replaced_data_and_skips_inference_tensors():
    """The cache key is the tensors' identity, version, storage and shape:
    `t.data = other` keeps the object and its version but not the rest,
    and inference tensors, which have no version, are never cached."""
    g = random_graph(seed=11, device="cpu")
    theirs, ours = _pair(pyg_nn.RGCNConv(IN_DIM, OUT_DIM, g.num_etypes),
                         hnn.RGCNConv(IN_DIM, OUT_DIM, g.num_etypes),
                         "cpu", 1)
    x = _x(g.num_nodes, IN_DIM, "cpu")
    edge_index, edge_type = g.edge_index.clone(), g.edge_type.clone()
    ours(x, edge_index, edge_type)
    first = ours._graph_cache._graph
    version = edge_index._version
    edge_index.data = edge_index.flip(0)[:, :-5].clone()
    edge_type.data = edge_type[:-5].clone()
    assert edge_index._version == version
    out = ours(x, edge_index, edge_type)
    assert ours._graph_cache._graph is not first
    assert_close(out, theirs(x, edge_index, edge_type), DTYPE,
                 "after .data was replaced")
    with torch.inference_mode():
        frozen_index, frozen_type = edge_index.clone(), edge_type.clone()
        out = ours(x.detach(), frozen_index, frozen_type)
        assert ours._graph_cache._key is None
    assert_close(out, theirs(x, edge_index, edge_type), DTYPE,
                 "on inference tensors")


def test_hgt_parameter_deep_in_a_submodule_is_checked():
    """One p_rel entry (a ParameterDict two levels down) of another dtype
    or device is named, as every parameter is."""
    g = random_typed_graph(seed=13)
    x = _x(g.num_nodes, OUT_DIM, "cpu")
    node_types, edge_types, x_dict, edge_index_dict = _hetero(g, x)
    ours = hnn.HGTConv(OUT_DIM, OUT_DIM, (node_types, edge_types))
    ours(x_dict, edge_index_dict)
    key = "__".join(edge_types[-1])
    ours.p_rel[key].data = ours.p_rel[key].data.double()
    with pytest.raises(TypeError, match=rf"parameter 'p_rel.{key}' is "
                                        r"torch.float64"):
        ours(x_dict, edge_index_dict)
    # A new Parameter object in its place is seen too.
    ours.p_rel[key] = torch.nn.Parameter(ours.p_rel[key].detach().float()
                                         .to("meta"))
    with pytest.raises(ValueError, match=rf"parameter 'p_rel.{key}' is on "
                                         r"meta"):
        ours(x_dict, edge_index_dict)


def test_hgt_graph_is_cached():
    g = random_typed_graph(seed=13)
    x = _x(g.num_nodes, OUT_DIM, "cpu")
    node_types, edge_types, x_dict, edge_index_dict = _hetero(g, x)
    ours = hnn.HGTConv(OUT_DIM, OUT_DIM, (node_types, edge_types))
    ours(x_dict, edge_index_dict)
    first = ours._graph_cache._graph
    ours(x_dict, edge_index_dict)
    assert ours._graph_cache._graph is first
    ours({t: v for t, v in x_dict.items() if t != "t2"},
         {et: ei for et, ei in edge_index_dict.items()
          if "t2" not in (et[0], et[2])})
    assert ours._graph_cache._graph is not first
    # A cached graph skips the edge dict's checks, so a change to a cached
    # tensor must bring them back: an out-of-range id written in place.
    ours(x_dict, edge_index_dict)
    et = edge_types[0]
    n = x_dict[et[2]].size(0)
    edge_index_dict[et][1, 0] = n
    with pytest.raises(ValueError, match=rf"\[1\]: id {n} is out of range"):
        ours(x_dict, edge_index_dict)
    # So must the same tensors under a key that is no edge type.
    edge_index_dict[et][1, 0] = 0
    ours(x_dict, edge_index_dict)
    renamed = {(("t0", "zz", "t1") if k == et else k): v
               for k, v in edge_index_dict.items()}
    with pytest.raises(ValueError, match=r"not an edge type"):
        ours(x_dict, renamed)


# ---------------------------------------------------------------------------
# Errors.

def _rgcn():
    return hnn.RGCNConv(IN_DIM, OUT_DIM, 4)


def _rgat():
    return hnn.RGATConv(IN_DIM, OUT_DIM, 4)


def _graph_args(n=30):
    g = random_graph(seed=11, num_nodes=n)
    return torch.randn(n, IN_DIM), g.edge_index, g.edge_type


def _call(layer_fn, **change):
    """Calls layer(x, edge_index, edge_type) with some arguments
    replaced."""
    x, ei, et = _graph_args()
    args = {"x": x, "edge_index": ei, "edge_type": et}
    args.update({k: (v(args[k]) if callable(v) else v)
                 for k, v in change.items()})
    return lambda: layer_fn()(**args)


def _bump(t, value=4, at=0):
    t = t.clone()
    t.view(-1)[at] = value
    return t


FORWARD_ERRORS = [
    # (id, call, exception, text the message must contain)
    ("edge_type_out_of_range", _call(_rgcn, edge_type=_bump), ValueError,
     "edge_type: id 4 is out of range for num_relations=4"),
    ("edge_type_negative",
     _call(_rgat, edge_type=lambda t: t - 1), ValueError,
     "edge_type: ids must be non-negative"),
    ("edge_type_shape", _call(_rgcn, edge_type=lambda t: t[:-1]), ValueError,
     "edge_type: expected shape"),
    ("edge_type_dtype", _call(_rgcn, edge_type=lambda t: t.int()), TypeError,
     "edge_type: expected dtype torch.int64"),
    ("edge_type_missing", _call(_rgcn, edge_type=None), ValueError,
     "edge_type: required"),
    ("edge_index_shape", _call(_rgcn, edge_index=lambda t: t.t()),
     ValueError, "edge_index: expected shape [2, num_edges]"),
    ("edge_index_dtype", _call(_rgat, edge_index=lambda t: t.float()),
     TypeError, "edge_index: expected dtype torch.int64"),
    ("edge_index_range",
     _call(_rgcn, edge_index=lambda t: _bump(t, 30, at=t.size(1))),
     ValueError, "edge_index: id 30 is out of range for x with 30 rows"),
    ("x_width", _call(_rgcn, x=lambda t: t[:, :-1]), ValueError,
     "x: expected shape [num_nodes, 6]"),
    ("x_float16", _call(_rgcn, x=lambda t: t.half()), TypeError,
     "x: the generated kernels take float32 or float64"),
    ("x_float64_layer_float32", _call(_rgat, x=lambda t: t.double()),
     TypeError, "x: torch.float64 but the layer's parameter"),
    ("x_indices", _call(_rgcn, x=lambda t: torch.arange(30)),
     NotImplementedError, "x: node indices"),
    ("x_none", _call(_rgcn, x=None), NotImplementedError, "x: None"),
    ("x_tuple", _call(_rgcn, x=lambda t: (t, t)), NotImplementedError,
     "x: a (source, target) tuple"),
    ("layer_float16", _call(lambda: _rgcn().half()), TypeError,
     "weight: the generated kernels take float32 or float64"),
]


@pytest.mark.parametrize("call,exc,text", [c[1:] for c in FORWARD_ERRORS],
                         ids=[c[0] for c in FORWARD_ERRORS])
def test_forward_errors(call, exc, text):
    with pytest.raises(exc) as info:
        call()
    assert text in str(info.value)


def test_rgat_forward_unsupported_arguments():
    x, ei, et = _graph_args()
    layer = _rgat()
    with pytest.raises(NotImplementedError, match="edge_attr"):
        layer(x, ei, et, edge_attr=torch.randn(ei.size(1), 2))
    with pytest.raises(NotImplementedError, match="return_attention_weights"):
        layer(x, ei, et, return_attention_weights=True)
    with pytest.raises(NotImplementedError, match="size"):
        layer(x, ei, et, size=(30, 20))
    assert layer(x, ei, et, size=(30, 30)).shape == (30, OUT_DIM)
    dropping = hnn.RGATConv(IN_DIM, OUT_DIM, 4, dropout=0.3)
    with pytest.raises(NotImplementedError, match="dropout"):
        dropping(x, ei, et)
    assert dropping.eval()(x, ei, et).shape == (30, OUT_DIM)


CONSTRUCTOR_ERRORS = [
    ("rgcn_aggr", lambda: hnn.RGCNConv(4, 4, 2, aggr="add"),
     NotImplementedError, "aggr='add'"),
    ("rgcn_tuple_in", lambda: hnn.RGCNConv((4, 5), 4, 2),
     NotImplementedError, "in_channels"),
    ("rgcn_bases_and_blocks",
     lambda: hnn.RGCNConv(4, 4, 2, num_bases=2, num_blocks=2), ValueError,
     "num_bases and num_blocks"),
    ("rgcn_blocks_divide", lambda: hnn.RGCNConv(5, 4, 2, num_blocks=2),
     ValueError, "num_blocks=2 must divide"),
    ("rgcn_flow", lambda: hnn.RGCNConv(4, 4, 2, flow="target_to_source"),
     NotImplementedError, "flow='target_to_source'"),
    ("rgcn_unknown_kwarg", lambda: hnn.RGCNConv(4, 4, 2, foo=1), TypeError,
     "'foo'"),
    ("rgat_mod", lambda: hnn.RGATConv(4, 4, 2, mod="additive"),
     NotImplementedError, "mod='additive'"),
    ("rgat_within", lambda: hnn.RGATConv(
        4, 4, 2, attention_mechanism="within-relation"),
     NotImplementedError, "attention_mechanism='within-relation'"),
    ("rgat_multiplicative", lambda: hnn.RGATConv(
        4, 4, 2, attention_mode="multiplicative-self-attention"),
     NotImplementedError, "attention_mode"),
    ("rgat_bad_mode", lambda: hnn.RGATConv(4, 4, 2, attention_mode="x"),
     ValueError, "attention_mode must be"),
    ("rgat_dim", lambda: hnn.RGATConv(4, 4, 2, dim=2), ValueError, "dim=2"),
    ("rgat_edge_dim", lambda: hnn.RGATConv(4, 4, 2, edge_dim=3),
     NotImplementedError, "edge_dim=3"),
    ("rgat_aggr", lambda: hnn.RGATConv(4, 4, 2, aggr="mean"),
     NotImplementedError, "aggr='mean'"),
    ("hgt_in_ne_out",
     lambda: hnn.HGTConv(5, 4, (["a"], [("a", "r", "a")])),
     NotImplementedError, "in_channels=5"),
    ("hgt_lazy", lambda: hnn.HGTConv(-1, 4, (["a"], [("a", "r", "a")])),
     NotImplementedError, "in_channels=-1"),
    ("hgt_heads_divide",
     lambda: hnn.HGTConv(4, 4, (["a"], [("a", "r", "a")]), heads=3),
     ValueError, "divisible by heads"),
    ("hgt_bad_edge_type",
     lambda: hnn.HGTConv(4, 4, (["a"], [("a", "r", "b")])), ValueError,
     "edge type ('a', 'r', 'b')"),
    ("hgt_in_dict_keys",
     lambda: hnn.HGTConv({"b": 4}, 4, (["a"], [("a", "r", "a")])),
     ValueError, "keys of in_channels"),
]


@pytest.mark.parametrize("make,exc,text", [c[1:] for c in CONSTRUCTOR_ERRORS],
                         ids=[c[0] for c in CONSTRUCTOR_ERRORS])
def test_constructor_errors(make, exc, text):
    with pytest.raises(exc) as info:
        make()
    assert text in str(info.value)


def test_hgt_forward_errors():
    g = random_typed_graph(seed=13)
    x = _x(g.num_nodes, OUT_DIM, "cpu")
    node_types, edge_types, x_dict, edge_index_dict = _hetero(g, x)
    layer = hnn.HGTConv(OUT_DIM, OUT_DIM, (node_types, edge_types))
    et = edge_types[0]

    def run(xd=None, ed=None):
        return layer(x_dict if xd is None else xd,
                     edge_index_dict if ed is None else ed)

    with pytest.raises(ValueError, match=r"edge_index_dict\[\('t0', 'zz'"):
        run(ed={**edge_index_dict, ("t0", "zz", "t1"): edge_index_dict[et]})
    bad = edge_index_dict[et].clone()
    n = x_dict[et[2]].size(0)
    bad[1, 0] = n
    with pytest.raises(ValueError, match=rf"\[1\]: id {n} is out of range "
                       rf"for x_dict\['{et[2]}'\] with {n} rows"):
        run(ed={**edge_index_dict, et: bad})
    with pytest.raises(ValueError, match=r"x_dict\['t1'\]: expected shape"):
        run(xd={**x_dict, "t1": x_dict["t1"][:, :-1]})
    with pytest.raises(TypeError, match=r"x_dict\['t0'\]: the generated "
                       "kernels take float32 or float64"):
        run(xd={**x_dict, "t0": x_dict["t0"].half()})
    with pytest.raises(ValueError, match="has edges but x_dict has no "
                       "source node type 't0'"):
        run(xd={t: v for t, v in x_dict.items() if t != "t0"})
    with pytest.raises(TypeError, match="edge_index_dict: expected a dict"):
        layer(x_dict, list(edge_index_dict.values()))


def test_rgcn_default_init_runs_and_trains():
    """Built from scratch (no PyG checkpoint), one optimiser step lowers a
    loss: the parameters receive gradients through the kernels."""
    torch.manual_seed(0)
    x, ei, et = _graph_args()
    layer = _rgcn()
    opt = torch.optim.SGD(layer.parameters(), lr=0.1)
    target = torch.randn(30, OUT_DIM)
    losses = []
    for _ in range(2):
        opt.zero_grad()
        loss = ((layer(x, ei, et) - target) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.grad is not None and p.grad.abs().sum() > 0
               for p in layer.parameters())
    assert losses[1] < losses[0]




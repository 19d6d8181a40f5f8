"""The runtime bad-input matrix: what hector.Graph, LayerLibrary.run,
LayerLibrary.Layer, hector.nn, hector.interpret and hector.from_pyg do with
wrong, inconsistent or unusual input, in one place.

Every case runs on "cpu" and on "cuda" (skipped without a GPU). A bad input
must raise the exact exception type with a message naming the offending
argument (pytest.raises(..., match=...)). A valid but unusual input must
give the right result: the fp64 interpreter's (fp32 kernels to 1e-5
relative, fp64 kernels to 1e-10), references.py's, or a closed form. Where a
case needs a second device and there is no GPU, the meta device stands in
for it (the runtime compares devices before reading any data); the cases
that must compute on the second device skip instead.

Bad input -> exception naming the argument (test_bad_input_raises).
"run": LayerLibrary.run, "layer": LayerLibrary.Layer, "nn": hector.nn,
"graph": hector.Graph; the model is rgcn unless named.
  dtype
    run_x_float16                     x float16 -> TypeError x
    run_x_bfloat16                    x bfloat16 -> TypeError x
    run_x_int64                       x int64 -> TypeError x
    run_param_int32                   W int32 -> TypeError W
    run_param_float16                 W_self float16 -> TypeError W_self
    run_x_float64_params_float32      fp64 x, fp32 params -> TypeError W
    run_bias_float64_rest_float32     fp64 bias only -> TypeError bias
    layer_x_float64                   fp64 x, fp32 layer -> TypeError W
    nn_x_float16                      RGCNConv, x float16 -> TypeError x
    nn_x_float64_layer_float32        RGATConv, fp64 x -> TypeError x ('q')
    nn_one_param_float64              RGCNConv, fp64 bias -> TypeError x
    nn_edge_type_int32                edge_type int32 -> TypeError edge_type
    graph_edge_index_float            float edge_index -> TypeError
    interpret_mixed_float32_float64   fp32 x, fp64 params -> TypeError
  device (second device: cuda <-> cpu, or meta without a GPU)
    run_x_on_other_device             x elsewhere -> ValueError x
    run_param_on_other_device         W elsewhere -> ValueError W
    run_graph_reused_on_other_device  graph here, values there -> ValueError x
    layer_on_other_device             Layer moved, graph not -> ValueError W
    nn_edge_index_on_other_device     -> ValueError edge_index
    nn_edge_type_on_other_device      -> ValueError edge_type
    nn_layer_on_other_device          RGCNConv moved, x not -> ValueError x
    nn_hgt_x_dict_on_two_devices      -> ValueError x_dict['b']
    graph_edge_type_on_other_device   -> ValueError edge_type
    interpret_input_on_other_device   -> ValueError inputs['x']
  shape
    run_x_feature_dim                 x [12, 5] -> ValueError x
    run_x_rows_not_num_nodes          x [11, 4] -> ValueError x
    run_x_1d                          x [48] -> ValueError x
    run_param_rows_not_num_etypes     W [2, 4, 4] -> ValueError W
    run_param_wrong_shape             W_self [4, 5] -> ValueError W_self
    run_bias_extra_dim                bias [1, 4] -> ValueError bias
    run_rgat_attention_shape          rgat a_src for 1 head -> ValueError
    run_hgt_ntype_param_rows          hgt K [3, 4, 4] -> ValueError K
    layer_x_feature_dim               -> ValueError x
    layer_graph_other_num_etypes      Layer(4 etypes), graph 3 -> ValueError
    nn_x_feature_dim                  -> ValueError x
    nn_x_fewer_rows_than_ids          x [5, 4] -> ValueError edge_index
    nn_edge_index_transposed          edge_index [E, 2] -> ValueError
    nn_edge_type_length               E - 1 types -> ValueError edge_type
    nn_param_wrong_shape              root [out, in] -> ValueError root
    nn_hgt_x_dict_feature_dim         -> ValueError x_dict['a']
    graph_edge_type_length            -> ValueError edge_type
    graph_node_type_length            num_nodes 13, 12 types -> ValueError
    interpret_x_rows                  -> ValueError inputs['x']
  layout and overlap
    run_x_transposed_view             -> ValueError x (contiguous)
    run_x_expanded_stride0            -> ValueError x (contiguous)
    run_x_overlapping_rows            as_strided rows -> ValueError x
    run_param_transposed_view         W.transpose(1, 2) -> ValueError W
    run_bias_expanded_stride0         -> ValueError bias
    nn_param_noncontiguous            root a transposed view -> ValueError
    run_x_sparse                      -> ValueError x (dense)
    run_x_negative_view               x._neg_view() -> ValueError x
  ids
    graph_edge_index_out_of_range     id 12 >= num_nodes -> ValueError
    graph_edge_index_negative         -> ValueError edge_index
    graph_edge_type_ge_num_etypes     -> ValueError edge_type
    graph_edge_type_negative          -> ValueError edge_type
    graph_node_type_ge_num_ntypes     -> ValueError node_type
    graph_node_type_negative          -> ValueError node_type
    nn_edge_index_out_of_range        -> ValueError edge_index
    nn_edge_index_negative            -> ValueError edge_index
    nn_edge_type_ge_num_relations     -> ValueError edge_type
    nn_edge_type_negative             -> ValueError edge_type
    nn_hgt_edge_index_out_of_range    -> ValueError edge_index_dict[...]
    from_pyg_edge_type_ge_num_etypes  -> ValueError edge_type
  a library / layer of another model
    run_rgcn_given_rgat_values        -> TypeError unknown a_src, a_dst
    run_rgat_given_rgcn_values        -> ValueError missing a_src, a_dst
    run_hgt_given_rgcn_values         -> TypeError unknown W, W_self, bias
    run_rgat_pyg_given_rgat_values    -> TypeError unknown W, a_src, ...
    run_rgcn_given_rgat_hypers        -> TypeError unknown heads
    layer_rgcn_loads_rgat_state_dict  -> RuntimeError a_src, a_dst
    interpret_rgcn_given_rgat_params  -> ValueError params['a_src']
  hyper-parameters
    run_hyper_zero                    in_dim=0 -> ValueError in_dim
    run_hyper_negative                out_dim=-4 -> ValueError out_dim
    run_hyper_fractional              in_dim=2.5 -> ValueError in_dim
    run_hyper_nan                     in_dim=nan -> ValueError in_dim
    run_hyper_str                     in_dim="4" -> TypeError in_dim
    run_hyper_none                    in_dim=None -> TypeError in_dim
    run_hyper_bool                    in_dim=True -> TypeError in_dim
    run_heads_not_dividing            rgat heads=3 -> ValueError out_dim/heads
    run_float_hyper_str               rgat slope="0.2" -> TypeError slope
    run_hyper_disagrees_with_tensors  in_dim=8, x [12, 4] -> ValueError x
    run_hyper_beyond_int64            in_dim=2**70 -> ValueError in_dim
    layer_hyper_zero                  -> ValueError in_dim
    layer_num_etypes_float            -> TypeError num_etypes
    layer_num_ntypes_negative         -> ValueError num_ntypes
    nn_in_channels_zero               -> ValueError in_channels
    nn_num_relations_float            -> TypeError num_relations
    nn_num_bases_negative             -> ValueError num_bases
    nn_heads_zero                     -> ValueError heads
    nn_hgt_heads_not_dividing         -> ValueError heads
    nn_negative_slope_str             -> TypeError negative_slope
    nn_dropout_none                   -> TypeError dropout
    interpret_hyper_negative          -> ValueError in_dim
  Python types
    run_graph_none                    -> TypeError graph
    run_graph_is_edge_index           a tensor as graph -> TypeError graph
    run_values_list                   -> TypeError values
    run_x_none                        -> TypeError x
    run_x_list                        -> TypeError x
    run_x_float                       -> TypeError x
    layer_graph_none                  -> TypeError graph
    layer_x_none                      -> TypeError x
    graph_edge_index_none             -> TypeError edge_index
    graph_edge_index_list             -> TypeError edge_index
    graph_edge_type_none              -> TypeError edge_type
    graph_num_nodes_str               -> TypeError num_nodes
    nn_x_list                         -> TypeError x
    nn_edge_index_none                -> TypeError edge_index
    nn_edge_type_list                 -> TypeError edge_type
    nn_hgt_x_dict_list                -> TypeError x_dict
    nn_hgt_x_dict_value_none          -> TypeError x_dict['a']
    interpret_graph_none              -> TypeError graph
    interpret_input_list              -> TypeError inputs['x']
    shapes_graph_none                 -> TypeError graph_or_sizes
    from_pyg_none                     -> TypeError from_pyg

Valid but unusual input -> the right result:
  test_aliased_inputs (forward and gradients vs the interpreter; the
  aliased inputs are left unchanged)
    rgat_a_src_is_a_dst               one tensor for a_src and a_dst
    rgcn_W_self_is_a_view_of_W        W_self = W[1] (shared storage)
  test_graph_owns_its_index_tensors (hgt vs the interpreter)
    before_first_run                  edge tensors changed after Graph()
    after_first_run                   ... and after the first run
  test_graph_unusual_index_tensors (same arrays and output as int64)
    int32                             int32 edge_index/edge_type/node_type
    edge_index_transposed_storage     non-contiguous edge_index
    edge_type_expanded_stride0        edge_type with stride 0
  test_nn_unusual_layouts (RGCNConv in fp64 vs references.rgcn)
    x_transposed_view                 x a transposed view
    x_expanded_stride0                x with stride 0
    edge_index_noncontiguous          edge_index a transposed view
    edge_type_expanded_stride0        edge_type with stride 0
    weight_noncontiguous              weight a non-contiguous Parameter
    x_more_rows_than_ids              extra rows: extra isolated nodes
  test_empty_graph (interpreter, self-term closed form, zero gradients)
    rgcn_no_edges, rgcn_no_nodes      0 edges (5 nodes), 0 nodes
    rgat_no_edges, rgat_no_nodes
    hgt_no_edges, hgt_no_nodes
    nn_no_edges, nn_no_nodes          RGCNConv
  test_empty_graph_without_relations  num_etypes=0: the self term
  test_relation_without_edges (interpreter; zero gradient rows)
    rgcn, rgat, hgt
  test_isolated_nodes (self-term closed form; interpreter)
    rgcn, rgat, hgt
  test_self_loops_and_multi_edges (fp64, interpreter and references.py)
    rgcn, rgat, hgt, nn_rgcn
  test_nan_inf_propagate (non-finite rows = the node and its out-
  neighbours; non-finite positions of h and d/dx as in the interpreter)
    rgcn, rgat, hgt, nn_rgcn          NaN and Inf in x
    rgcn_bias_nan                     one bias entry NaN -> its column
  test_moved_to_other_device (skipped without a second real device)
    graph_to                          Graph.to(other) then run there
    nn_layer_to                       RGCNConv used, then moved
"""

import re
import types

import pytest
import torch

import hector
import hector.nn as hnn
import references
from conftest import generated_ir, random_graph, rel_err

# The standard graph: random_graph's 12 nodes (the last 3 isolated), 3
# relations (the last without edges), 2 node types, multi-edges and
# self-loops.
N, R, T = 12, 3, 2
HYPERS = {"rgcn": dict(in_dim=4, out_dim=4),
          "rgat": dict(in_dim=4, out_dim=4, heads=2),
          "hgt": dict(in_dim=4, heads=2)}
TOL = {torch.float32: 1e-5, torch.float64: 1e-10}
IN, OUT = 4, 3  # hector.nn layers
HGT_META = (["a", "b"], [("a", "r", "b"), ("b", "s", "a")])


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def _other(device):
    """A second device: the CPU for a GPU, else a GPU when there is one,
    else the meta device (a stand-in: data on it cannot be read)."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.device("cpu")
    return torch.device("cuda" if torch.cuda.is_available() else "meta")


def _dev(device):
    """How messages print `device` ("cpu", "cuda:0", "meta")."""
    return str(torch.empty(0, device=device).device)


def _data(device, seed=0):
    return random_graph(num_nodes=N, num_edges=24, num_etypes=R,
                        num_ntypes=T, seed=seed, device=device)


def _randn(shape, device, dtype=torch.float32, seed=0, scale=0.5):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=gen, dtype=torch.float64) *
            scale).to(device=device, dtype=dtype)


def _values(lib, g, hypers, device, dtype=torch.float32, seed=0):
    shapes = lib.shapes(g, **hypers)
    return {k: _randn(shapes[k], device, dtype, seed + i)
            for i, k in enumerate(lib.inputs + lib.params)}


def _setup(model, device, dtype=torch.float32, graph=None):
    """(library, hector.Graph, {name: tensor}, hypers) of a bundled model
    on the standard graph (or `graph`)."""
    lib = hector.load(model)
    hypers = dict(HYPERS[model])
    g = _data(device).hector() if graph is None else graph
    return lib, g, _values(lib, g, hypers, device, dtype), hypers


def _interpret(model, g, values, hypers):
    """The fp64 interpreter's h (differentiable w.r.t. fp64 values)."""
    lib = hector.load(model)
    return hector.interpret(
        generated_ir(model), g, {k: values[k].double() for k in lib.inputs},
        {k: values[k].double() for k in lib.params}, hypers)["h"]


def _close(actual, expected, dtype, what):
    assert actual.shape == expected.shape, \
        f"{what}: shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    assert actual.device == expected.device, what
    assert torch.isfinite(actual).all(), f"{what}: not finite"
    err = rel_err(actual, expected)
    assert err <= TOL[dtype], f"{what}: relative error {err:.2e}"


def _grads(out, leaves, probe):
    names = list(leaves)
    grads = torch.autograd.grad((out * probe.to(out.dtype)).sum(),
                                [leaves[k] for k in names],
                                allow_unused=True)
    return {k: torch.zeros_like(leaves[k]) if g is None else g
            for k, g in zip(names, grads)}


def _compare_with_interpreter(model, g, values, hypers, dtype, what,
                              alias=None):
    """Runs the library (in `dtype`) and the interpreter (fp64) on copies
    of `values` (after alias(values), which may make two arguments share
    memory); compares h and the gradient of every leaf. Returns the
    library's h and gradients."""
    alias = alias or (lambda v: v)
    lib = hector.load(model)
    leaves = {k: v.detach().to(dtype).requires_grad_()
              for k, v in values.items()}
    leaves64 = {k: v.detach().double().requires_grad_()
                for k, v in values.items()}
    out = lib.run(g, alias(leaves), **hypers)["h"]
    expected = _interpret(model, g, alias(leaves64), hypers)
    _close(out, expected, dtype, f"{what}: h")
    probe = _randn(expected.shape, expected.device, torch.float64, seed=99,
                   scale=1.0)
    grads = _grads(out, leaves, probe)
    grads64 = _grads(expected, leaves64, probe)
    for k in leaves:
        _close(grads[k], grads64[k], dtype, f"{what}: d/d {k}")
    return out, grads


def _bump(t, at, value):
    """A copy of `t` with the flat element `at` set to `value`."""
    t = t.clone()
    t.view(-1)[at] = value
    return t


# --------------------------------------------------------------------------
# Builders of bad calls: each returns build(device) -> a thunk to call.
# Changes are functions f(old value, device) -> new value.
# --------------------------------------------------------------------------


def _run_with(model="rgcn", hypers=None, **change):
    """lib.run on the standard graph with some values (or hypers)
    changed."""
    def build(device):
        lib, g, values, hy = _setup(model, device)
        for k, f in change.items():
            values[k] = f(values.get(k), device)
        hy.update(hypers or {})
        return lambda: lib.run(g, values, **hy)
    return build


def _run_call(f):
    """f(lib, g, values, hypers, device) with the rgcn setup."""
    def build(device):
        lib, g, values, hy = _setup("rgcn", device)
        return lambda: f(lib, g, values, hy, device)
    return build


def _layer_call(x=None, graph=None, layer=None):
    """rgcn's Layer(R, T)(graph, x) with x, the graph or the layer
    changed."""
    def build(device):
        lib, g, values, hy = _setup("rgcn", device)
        module = lib.Layer(R, T, **hy).to(device)
        if layer is not None:
            module = layer(module, device)
        args = [g if graph is None else graph(g, device),
                values["x"] if x is None else x(values["x"], device)]
        return lambda: module(*args)
    return build


def _graph_with(**change):
    """hector.Graph(...) of the standard graph's tensors with some
    arguments changed (num_nodes etc. given explicitly)."""
    def build(device):
        d = _data(device)
        kwargs = dict(edge_index=d.edge_index, edge_type=d.edge_type,
                      node_type=d.node_type, num_nodes=N, num_etypes=R,
                      num_ntypes=T)
        for k, f in change.items():
            kwargs[k] = f(kwargs[k], device)
        return lambda: hector.Graph(**kwargs)
    return build


def _nn_layer(kind):
    if kind == "rgcn":
        return hnn.RGCNConv(IN, OUT, R)
    return hnn.RGATConv(IN, OUT, R, heads=2)


def _nn_call(kind="rgcn", layer=None, **change):
    """A hector.nn layer's forward(x, edge_index, edge_type) on the
    standard graph with some arguments (or the layer) changed."""
    def build(device):
        d = _data(device)
        module = _nn_layer(kind).to(device)
        if layer is not None:
            module = layer(module, device)
        args = dict(x=_randn((N, IN), device), edge_index=d.edge_index,
                    edge_type=d.edge_type)
        for k, f in change.items():
            args[k] = f(args[k], device)
        return lambda: module(**args)
    return build


def _hgt_call(x_dict=None, edge_index_dict=None):
    """hector.nn.HGTConv on two node types, with the dicts changed."""
    def build(device):
        module = hnn.HGTConv(IN, IN, HGT_META, heads=2).to(device)
        xd = {"a": _randn((5, IN), device, seed=1),
              "b": _randn((4, IN), device, seed=2)}
        ed = {("a", "r", "b"): torch.tensor([[0, 1, 4], [0, 3, 2]],
                                            device=device),
              ("b", "s", "a"): torch.tensor([[3, 0], [4, 1]],
                                            device=device)}
        xd = xd if x_dict is None else x_dict(xd, device)
        ed = ed if edge_index_dict is None else edge_index_dict(ed, device)
        return lambda: module(xd, ed)
    return build


def _interpret_call(inputs=None, params=None, hypers=None, graph=None):
    """hector.interpret on rgcn's IR with the arguments changed."""
    def build(device):
        lib, g, values, hy = _setup("rgcn", device)
        ins = {k: values[k] for k in lib.inputs}
        ps = {k: values[k] for k in lib.params}
        ins = ins if inputs is None else inputs(ins, device)
        ps = ps if params is None else params(ps, device)
        hy = dict(hy, **(hypers or {}))
        gr = g if graph is None else graph(g, device)
        return lambda: hector.interpret(generated_ir("rgcn"), gr, ins, ps,
                                        hy)
    return build


def _just(f):
    """A call that needs nothing of the device (constructors)."""
    return lambda device: f


def _to_other(t, device):
    return t.to(_other(device))


def _rgat_values(device):
    lib, g, values, hy = _setup("rgat", device)
    return values


def _case(case_id, build, exc, text, xfail=None):
    """One row of the matrix: `text` must appear in the message ("<dev>" and
    "<other>" stand for the device and the second device); a compiled
    pattern is matched as a regular expression. `xfail`: (the exception
    the call raises today, reason)."""
    marks = []
    if xfail is not None:
        marks.append(pytest.mark.xfail(strict=True, raises=xfail[0],
                                       reason=xfail[1]))
    return pytest.param(build, exc, text, id=case_id, marks=marks)


# --------------------------------------------------------------------------
# The error matrix
# --------------------------------------------------------------------------

DTYPE = [
    _case("run_x_float16", _run_with(x=lambda t, d: t.half()), TypeError,
          "x: expected a float32 or float64 tensor, got Half"),
    _case("run_x_bfloat16", _run_with(x=lambda t, d: t.bfloat16()),
          TypeError, "x: expected a float32 or float64 tensor, got BFloat16"),
    _case("run_x_int64", _run_with(x=lambda t, d: t.long()), TypeError,
          "x: expected a float32 or float64 tensor, got Long"),
    _case("run_param_int32", _run_with(W=lambda t, d: t.int()), TypeError,
          "W: expected a Float tensor (the dtype of x), got Int"),
    _case("run_param_float16", _run_with(W_self=lambda t, d: t.half()),
          TypeError,
          "W_self: expected a Float tensor (the dtype of x), got Half"),
    _case("run_x_float64_params_float32",
          _run_with(x=lambda t, d: t.double()), TypeError,
          "W: expected a Double tensor (the dtype of x), got Float"),
    _case("run_bias_float64_rest_float32",
          _run_with(bias=lambda t, d: t.double()), TypeError,
          "bias: expected a Float tensor (the dtype of x), got Double"),
    _case("layer_x_float64", _layer_call(x=lambda t, d: t.double()),
          TypeError,
          "W: expected a Double tensor (the dtype of x), got Float"),
    _case("nn_x_float16", _nn_call(x=lambda t, d: t.half()), TypeError,
          "x: the generated kernels take float32 or float64, got "
          "torch.float16"),
    _case("nn_x_float64_layer_float32",
          _nn_call("rgat", x=lambda t, d: t.double()), TypeError,
          "x: torch.float64 but the layer's parameter 'q' is torch.float32"),
    _case("nn_one_param_float64",
          _nn_call(layer=lambda m, d: setattr(
              m, "bias", torch.nn.Parameter(m.bias.double())) or m),
          TypeError, "x: torch.float32 but the layer's parameter 'bias' is "
          "torch.float64"),
    _case("nn_edge_type_int32", _nn_call(edge_type=lambda t, d: t.int()),
          TypeError, "edge_type: expected dtype torch.int64, got "
          "torch.int32"),
    _case("graph_edge_index_float",
          _graph_with(edge_index=lambda t, d: t.float()), TypeError,
          "edge_index: expected an integer tensor (e.g. torch.int64), got "
          "torch.float32"),
    _case("interpret_mixed_float32_float64",
          _interpret_call(params=lambda p, d: {k: v.double()
                                               for k, v in p.items()}),
          TypeError, "params['W']: dtype torch.float64 differs from "
          "inputs['x'] (torch.float32)"),
]


def _values_on_other(lib, g, values, hy, device):
    return lib.run(g, {k: _to_other(v, device) for k, v in values.items()},
                   **hy)


DEVICE = [
    _case("run_x_on_other_device", _run_with(x=_to_other), ValueError,
          "x: expected a tensor on <dev> (the graph's device), got one on "
          "<other>"),
    _case("run_param_on_other_device", _run_with(W=_to_other), ValueError,
          "W: expected a tensor on <dev> (the graph's device), got one on "
          "<other>"),
    _case("run_graph_reused_on_other_device", _run_call(_values_on_other),
          ValueError, "x: expected a tensor on <dev> (the graph's device), "
          "got one on <other>"),
    _case("layer_on_other_device",
          _layer_call(layer=lambda m, d: m.to(_other(d))), ValueError,
          "W: expected a tensor on <dev> (the graph's device), got one on "
          "<other>"),
    _case("nn_edge_index_on_other_device", _nn_call(edge_index=_to_other),
          ValueError, "edge_index: on <other> but x is on <dev>"),
    _case("nn_edge_type_on_other_device", _nn_call(edge_type=_to_other),
          ValueError, "edge_type: on <other> but x is on <dev>"),
    _case("nn_layer_on_other_device",
          _nn_call(layer=lambda m, d: m.to(_other(d))), ValueError,
          "x: on <dev> but the layer's parameter 'weight' is on <other>"),
    _case("nn_hgt_x_dict_on_two_devices",
          _hgt_call(x_dict=lambda xd, d: dict(xd, b=_to_other(xd["b"], d))),
          ValueError, "x_dict['b']: on <other> but x_dict['a'] is on <dev>"),
    _case("graph_edge_type_on_other_device",
          _graph_with(edge_type=_to_other), ValueError,
          "edge_type: on <other> but edge_index is on <dev>"),
    _case("interpret_input_on_other_device",
          _interpret_call(inputs=lambda i, d: {"x": _to_other(i["x"], d)}),
          ValueError, "inputs['x']: on <other> but the graph is on <dev>"),
]

SHAPE = [
    _case("run_x_feature_dim",
          _run_with(x=lambda t, d: _randn((N, 5), d)), ValueError,
          "x: expected shape [12, 4], got [12, 5]"),
    _case("run_x_rows_not_num_nodes", _run_with(x=lambda t, d: t[:-1]),
          ValueError, "x: expected shape [12, 4], got [11, 4]"),
    _case("run_x_1d", _run_with(x=lambda t, d: t.flatten()), ValueError,
          "x: expected shape [12, 4], got [48]"),
    _case("run_param_rows_not_num_etypes", _run_with(W=lambda t, d: t[:-1]),
          ValueError, "W: expected shape [3, 4, 4], got [2, 4, 4]"),
    _case("run_param_wrong_shape",
          _run_with(W_self=lambda t, d: _randn((4, 5), d)), ValueError,
          "W_self: expected shape [4, 4], got [4, 5]"),
    _case("run_bias_extra_dim", _run_with(bias=lambda t, d: t[None]),
          ValueError, "bias: expected shape [4], got [1, 4]"),
    _case("run_rgat_attention_shape",
          _run_with("rgat", a_src=lambda t, d: t.reshape(R, 1, 4)),
          ValueError, "a_src: expected shape [3, 2, 2], got [3, 1, 4]"),
    _case("run_hgt_ntype_param_rows",
          _run_with("hgt", K=lambda t, d: _randn((T + 1, 4, 4), d)),
          ValueError, "K: expected shape [2, 4, 4], got [3, 4, 4]"),
    _case("layer_x_feature_dim", _layer_call(x=lambda t, d: _randn((N, 6),
                                                                   d)),
          ValueError, "x: expected shape [12, 4], got [12, 6]"),
    _case("layer_graph_other_num_etypes",
          _layer_call(layer=lambda m, d: hector.load("rgcn").Layer(
              R + 1, T, **HYPERS["rgcn"]).to(d)), ValueError,
          "graph: has num_etypes=3, num_ntypes=2, but this rgcn layer was "
          "built for num_etypes=4, num_ntypes=2"),
    _case("nn_x_feature_dim", _nn_call(x=lambda t, d: _randn((N, 5), d)),
          ValueError, "x: expected shape [num_nodes, 4], got [12, 5]"),
    _case("nn_x_fewer_rows_than_ids", _nn_call(x=lambda t, d: t[:5]),
          ValueError, re.compile(r"edge_index: id \d+ is out of range for x "
                                 r"with 5 rows")),
    _case("nn_edge_index_transposed", _nn_call(edge_index=lambda t, d: t.t()),
          ValueError, "edge_index: expected shape [2, num_edges], got "
          "[39, 2]"),
    _case("nn_edge_type_length", _nn_call(edge_type=lambda t, d: t[:-1]),
          ValueError, "edge_type: expected shape [39] (one per edge of "
          "edge_index), got [38]"),
    _case("nn_param_wrong_shape",
          _nn_call(layer=lambda m, d: setattr(m, "root", torch.nn.Parameter(
              _randn((OUT, IN), d))) or m),
          ValueError, "root: expected shape [4, 3], got [3, 4]"),
    _case("nn_hgt_x_dict_feature_dim",
          _hgt_call(x_dict=lambda xd, d: dict(xd, a=_randn((5, 3), d))),
          ValueError, "x_dict['a']: expected shape [num_nodes, 4], got "
          "[5, 3]"),
    _case("graph_edge_type_length",
          _graph_with(edge_type=lambda t, d: t[:-1]), ValueError,
          "edge_type: expected shape [39] (one per edge of edge_index), got "
          "[38]"),
    _case("graph_node_type_length", _graph_with(num_nodes=lambda n, d: N + 1),
          ValueError, "num_nodes: 13 but node_type has 12 entries"),
    _case("interpret_x_rows",
          _interpret_call(inputs=lambda i, d: {"x": i["x"][:-1]}),
          ValueError, "inputs['x']: expected shape [12, 4] (node rows "
          "first), got [11, 4]"),
]


def _overlapping(t, device):
    """[N, 4] rows that overlap in memory (row i starts at element i)."""
    base = _randn(N + 3, device)
    return base.as_strided((N, 4), (1, 1))


LAYOUT = [
    _case("run_x_transposed_view",
          _run_with(x=lambda t, d: t.t().contiguous().t()), ValueError,
          "x: expected a contiguous tensor (call .contiguous())"),
    _case("run_x_expanded_stride0",
          _run_with(x=lambda t, d: t[:1].expand(N, 4)), ValueError,
          "x: expected a contiguous tensor (call .contiguous())"),
    _case("run_x_overlapping_rows", _run_with(x=_overlapping), ValueError,
          "x: expected a contiguous tensor (call .contiguous())"),
    _case("run_param_transposed_view",
          _run_with(W=lambda t, d: t.transpose(1, 2)), ValueError,
          "W: expected a contiguous tensor (call .contiguous())"),
    _case("run_bias_expanded_stride0",
          _run_with(bias=lambda t, d: t[:1].expand(4)), ValueError,
          "bias: expected a contiguous tensor (call .contiguous())"),
    _case("nn_param_noncontiguous",
          _nn_call(layer=lambda m, d: setattr(m, "root", torch.nn.Parameter(
              _randn((OUT, IN), d).t())) or m),
          ValueError, "root: expected a contiguous tensor (call "
          ".contiguous())"),
    _case("run_x_sparse", _run_with(x=lambda t, d: t.to_sparse()),
          ValueError, "x: expected a dense (strided) tensor, got layout "),
    _case("run_x_negative_view", _run_with(x=lambda t, d: t._neg_view()),
          ValueError, "x: expected a tensor without a pending negation"),
]

IDS = [
    _case("graph_edge_index_out_of_range",
          _graph_with(edge_index=lambda t, d: _bump(t, 1, N)), ValueError,
          "edge_index: id 12 is out of range for num_nodes=12"),
    _case("graph_edge_index_negative",
          _graph_with(edge_index=lambda t, d: _bump(t, 40, -1)), ValueError,
          "edge_index: ids must be non-negative, found -1"),
    _case("graph_edge_type_ge_num_etypes",
          _graph_with(edge_type=lambda t, d: _bump(t, 0, R)), ValueError,
          "edge_type: id 3 is out of range for num_etypes=3"),
    _case("graph_edge_type_negative",
          _graph_with(edge_type=lambda t, d: _bump(t, 5, -1)), ValueError,
          "edge_type: ids must be non-negative, found -1"),
    _case("graph_node_type_ge_num_ntypes",
          _graph_with(node_type=lambda t, d: _bump(t, 3, T)), ValueError,
          "node_type: id 2 is out of range for num_ntypes=2"),
    _case("graph_node_type_negative",
          _graph_with(node_type=lambda t, d: _bump(t, 3, -1)), ValueError,
          "node_type: ids must be non-negative, found -1"),
    _case("nn_edge_index_out_of_range",
          _nn_call(edge_index=lambda t, d: _bump(t, 2, N)), ValueError,
          "edge_index: id 12 is out of range for x with 12 rows"),
    _case("nn_edge_index_negative",
          _nn_call("rgat", edge_index=lambda t, d: _bump(t, 2, -1)),
          ValueError, "edge_index: ids must be non-negative, found -1"),
    _case("nn_edge_type_ge_num_relations",
          _nn_call(edge_type=lambda t, d: _bump(t, 0, R)), ValueError,
          "edge_type: id 3 is out of range for num_relations=3"),
    _case("nn_edge_type_negative",
          _nn_call("rgat", edge_type=lambda t, d: _bump(t, 0, -1)),
          ValueError, "edge_type: ids must be non-negative, found -1"),
    _case("nn_hgt_edge_index_out_of_range",
          _hgt_call(edge_index_dict=lambda ed, d: {
              **ed, ("a", "r", "b"): _bump(ed[("a", "r", "b")], 4, 4)}),
          ValueError, "edge_index_dict[('a', 'r', 'b')][1]: id 4 is out of "
          "range for x_dict['b'] with 4 rows"),
    _case("from_pyg_edge_type_ge_num_etypes",
          lambda device: (lambda d: lambda: hector.from_pyg(
              types.SimpleNamespace(edge_index=d.edge_index,
                                    edge_type=d.edge_type, num_nodes=N),
              num_etypes=1))(_data(device)),
          ValueError, "edge_type: id 1 is out of range for num_etypes=1"),
]


def _load_rgat_state(lib, g, values, hy, device):
    layer = lib.Layer(R, T, **hy)
    rgat = hector.load("rgat").Layer(R, T, **HYPERS["rgat"])
    return layer.load_state_dict(rgat.state_dict())


MODEL = [
    _case("run_rgcn_given_rgat_values",
          _run_call(lambda lib, g, v, hy, d: lib.run(g, _rgat_values(d),
                                                     **hy)),
          TypeError, "rgcn: unknown values 'a_src', 'a_dst'; its inputs "
          "are: x; its params: W, W_self, bias"),
    _case("run_rgat_given_rgcn_values",
          _run_call(lambda lib, g, v, hy, d: hector.load("rgat").run(
              g, v, **HYPERS["rgat"])),
          ValueError, "rgat: missing values for a_src, a_dst"),
    _case("run_hgt_given_rgcn_values",
          _run_call(lambda lib, g, v, hy, d: hector.load("hgt").run(g, v)),
          TypeError, "hgt: unknown values 'W', 'W_self', 'bias'"),
    _case("run_rgat_pyg_given_rgat_values",
          _run_call(lambda lib, g, v, hy, d: hector.load("rgat_pyg").run(
              g, _rgat_values(d))),
          TypeError, "rgat_pyg: unknown values 'W', 'a_src', 'a_dst', "
          "'W_self'; its inputs are: x; its params: weight_, q, k, bias"),
    _case("run_rgcn_given_rgat_hypers",
          _run_with(hypers=HYPERS["rgat"]), TypeError,
          "rgcn: unknown hyper-parameter 'heads'; its hyper-parameters are: "
          "in_dim, out_dim"),
    _case("layer_rgcn_loads_rgat_state_dict", _run_call(_load_rgat_state),
          RuntimeError, 'Unexpected key(s) in state_dict: "a_src", "a_dst"'),
    _case("interpret_rgcn_given_rgat_params",
          _interpret_call(params=lambda p, d: {
              k: v for k, v in _rgat_values(d).items() if k != "x"}),
          ValueError, "params['a_src']: model @rgcn has no param named "
          "'a_src'; its params are: W, W_self, bias"),
]

HYPER = [
    _case("run_hyper_zero", _run_with(hypers=dict(in_dim=0)), ValueError,
          "rgcn: hyper-parameter in_dim must be a positive integer, got 0"),
    _case("run_hyper_negative", _run_with(hypers=dict(out_dim=-4)),
          ValueError, "rgcn: hyper-parameter out_dim must be a positive "
          "integer, got -4"),
    _case("run_hyper_fractional", _run_with(hypers=dict(in_dim=2.5)),
          ValueError, "rgcn: hyper-parameter in_dim: expected an integer, "
          "got 2.5"),
    _case("run_hyper_nan", _run_with(hypers=dict(in_dim=float("nan"))),
          ValueError, "rgcn: hyper-parameter in_dim: expected an integer, "
          "got nan"),
    _case("run_hyper_str", _run_with(hypers=dict(in_dim="4")), TypeError,
          "rgcn: hyper-parameter in_dim: expected a number, got str"),
    _case("run_hyper_none", _run_with(hypers=dict(in_dim=None)), TypeError,
          "rgcn: hyper-parameter in_dim: expected a number, got NoneType"),
    _case("run_hyper_bool", _run_with(hypers=dict(in_dim=True)), TypeError,
          "rgcn: hyper-parameter in_dim: expected a number, got bool"),
    _case("run_heads_not_dividing", _run_with("rgat", hypers=dict(heads=3)),
          ValueError, "hypers: the dimension out_dim/heads is not a whole "
          "number"),
    _case("run_float_hyper_str", _run_with("rgat", hypers=dict(slope="0.2")),
          TypeError, "rgat: hyper-parameter slope: expected a number, got "
          "str"),
    _case("run_hyper_disagrees_with_tensors",
          _run_with(hypers=dict(in_dim=8)), ValueError,
          "x: expected shape [12, 8], got [12, 4]"),
    _case("run_hyper_beyond_int64", _run_with(hypers=dict(in_dim=2 ** 70)),
          ValueError, "rgcn: hyper-parameter in_dim must be below 2**63"),
    _case("layer_hyper_zero",
          _just(lambda: hector.load("rgcn").Layer(R, T, in_dim=0)),
          ValueError, "rgcn: hyper-parameter in_dim must be a positive "
          "integer, got 0"),
    _case("layer_num_etypes_float",
          _just(lambda: hector.load("rgcn").Layer(3.0, T)), TypeError,
          "num_etypes: expected an int, got float"),
    _case("layer_num_ntypes_negative",
          _just(lambda: hector.load("rgcn").Layer(R, -1)), ValueError,
          "num_ntypes: must be non-negative, got -1"),
    _case("nn_in_channels_zero", _just(lambda: hnn.RGCNConv(0, OUT, R)),
          ValueError, "RGCNConv: in_channels must be positive, got 0"),
    _case("nn_num_relations_float",
          _just(lambda: hnn.RGCNConv(IN, OUT, 3.0)), TypeError,
          "RGCNConv: num_relations must be an int, got float"),
    _case("nn_num_bases_negative",
          _just(lambda: hnn.RGCNConv(IN, OUT, R, num_bases=-1)), ValueError,
          "RGCNConv: num_bases must be positive, got -1"),
    _case("nn_heads_zero", _just(lambda: hnn.RGATConv(IN, OUT, R, heads=0)),
          ValueError, "RGATConv: heads must be positive, got 0"),
    _case("nn_hgt_heads_not_dividing",
          _just(lambda: hnn.HGTConv(IN, IN, HGT_META, heads=3)), ValueError,
          "HGTConv: out_channels (4) must be divisible by heads (3)"),
    _case("nn_negative_slope_str",
          _just(lambda: hnn.RGATConv(IN, OUT, R, negative_slope="steep")),
          TypeError, "RGATConv: negative_slope: expected a number, got str"),
    _case("nn_dropout_none",
          _just(lambda: hnn.RGATConv(IN, OUT, R, dropout=None)), TypeError,
          "RGATConv: dropout: expected a number, got NoneType"),
    _case("interpret_hyper_negative",
          _interpret_call(hypers=dict(in_dim=-1)), ValueError,
          "hypers: the shape [in_dim] of 'x' has a negative dimension"),
]

PYTHON_TYPES = [
    _case("run_graph_none",
          _run_call(lambda lib, g, v, hy, d: lib.run(None, v, **hy)),
          TypeError, "graph: expected a hector.Graph, got NoneType"),
    _case("run_graph_is_edge_index",
          _run_call(lambda lib, g, v, hy, d: lib.run(g.edge_index, v, **hy)),
          TypeError, "graph: expected a hector.Graph, got Tensor"),
    _case("run_values_list",
          _run_call(lambda lib, g, v, hy, d: lib.run(g, list(v.values()),
                                                     **hy)),
          TypeError, "values: expected a dict {name: tensor}, got list"),
    _case("run_x_none", _run_with(x=lambda t, d: None), TypeError,
          "x: expected a torch.Tensor, got NoneType"),
    _case("run_x_list", _run_with(x=lambda t, d: t.tolist()), TypeError,
          "x: expected a torch.Tensor, got list"),
    _case("run_x_float", _run_with(x=lambda t, d: 1.0), TypeError,
          "x: expected a torch.Tensor, got float"),
    _case("layer_graph_none", _layer_call(graph=lambda g, d: None),
          TypeError, "graph: expected a hector.Graph, got NoneType"),
    _case("layer_x_none", _layer_call(x=lambda t, d: None), TypeError,
          "x: expected a torch.Tensor, got NoneType"),
    _case("graph_edge_index_none", _graph_with(edge_index=lambda t, d: None),
          TypeError, "edge_index: expected a torch.Tensor, got NoneType"),
    _case("graph_edge_index_list",
          _graph_with(edge_index=lambda t, d: t.tolist()), TypeError,
          "edge_index: expected a torch.Tensor, got list"),
    _case("graph_edge_type_none", _graph_with(edge_type=lambda t, d: None),
          TypeError, "edge_type: expected a torch.Tensor, got NoneType"),
    _case("graph_num_nodes_str", _graph_with(num_nodes=lambda n, d: "12"),
          TypeError, "num_nodes: expected an int, got str"),
    _case("nn_x_list", _nn_call(x=lambda t, d: t.tolist()), TypeError,
          "x: expected a float tensor [num_nodes, 4], got list"),
    _case("nn_edge_index_none", _nn_call(edge_index=lambda t, d: None),
          TypeError, "edge_index: expected a tensor [2, num_edges] (sparse "
          "adjacency types are not supported), got NoneType"),
    _case("nn_edge_type_list", _nn_call(edge_type=lambda t, d: t.tolist()),
          TypeError, "edge_type: expected a tensor [num_edges], got list"),
    _case("nn_hgt_x_dict_list",
          _hgt_call(x_dict=lambda xd, d: list(xd.values())), TypeError,
          "x_dict: expected a dict of node type -> tensor, got list"),
    _case("nn_hgt_x_dict_value_none",
          _hgt_call(x_dict=lambda xd, d: dict(xd, a=None)), TypeError,
          "x_dict['a']: expected a tensor, got NoneType"),
    _case("interpret_graph_none", _interpret_call(graph=lambda g, d: None),
          TypeError, "graph: expected a hector.Graph, got NoneType"),
    _case("interpret_input_list",
          _interpret_call(inputs=lambda i, d: {"x": i["x"].tolist()}),
          TypeError, "inputs['x']: expected a torch.Tensor, got list"),
    _case("shapes_graph_none",
          _run_call(lambda lib, g, v, hy, d: lib.shapes(None, **hy)),
          TypeError, "graph_or_sizes: expected a hector.Graph or a dict of "
          "sizes"),
    _case("from_pyg_none", _just(lambda: hector.from_pyg(None)), TypeError,
          "from_pyg: expected a torch_geometric HeteroData or Data with "
          "edge_index, got NoneType"),
]

BAD_INPUTS = DTYPE + DEVICE + SHAPE + LAYOUT + IDS + MODEL + HYPER + \
    PYTHON_TYPES
assert len({p.id for p in BAD_INPUTS}) == len(BAD_INPUTS)


@pytest.mark.parametrize("build,exc,text", BAD_INPUTS)
def test_bad_input_raises(build, exc, text, device):
    call = build(device)
    if isinstance(text, str):
        text = text.replace("<dev>", _dev(device)) \
                   .replace("<other>", _dev(_other(device)))
        pattern = re.escape(text)
    else:
        pattern = text
    with pytest.raises(exc, match=pattern):
        call()


# --------------------------------------------------------------------------
# Valid but unusual input: correct results
# --------------------------------------------------------------------------

ALIASES = {
    # One tensor for two read-only arguments of the same shape.
    "rgat_a_src_is_a_dst": ("rgat", lambda v: dict(v, a_dst=v["a_src"])),
    # W_self a view into W's storage (offset row 1): partial overlap.
    "rgcn_W_self_is_a_view_of_W": ("rgcn", lambda v: dict(v,
                                                          W_self=v["W"][1])),
}


@pytest.mark.parametrize("case", list(ALIASES))
def test_aliased_inputs(case, device):
    model, alias = ALIASES[case]
    lib, g, values, hypers = _setup(model, device, torch.float64)
    _, grads = _compare_with_interpreter(model, g, values, hypers,
                                         torch.float32, case, alias)
    # The op reads its aliased inputs and writes none of them.
    passed = alias({k: v.float() for k, v in values.items()})
    before = {k: v.clone() for k, v in passed.items()}
    lib.run(g, passed, **hypers)
    for k, v in passed.items():
        assert torch.equal(v, before[k]), k
    # The aliased-away leaf gets no gradient; the shared one gets both.
    dropped = "a_dst" if model == "rgat" else "W_self"
    assert grads[dropped].abs().sum() == 0
    assert grads["a_src" if model == "rgat" else "W"].abs().sum() > 0


@pytest.mark.parametrize("when", ["before_first_run", "after_first_run"])
def test_graph_owns_its_index_tensors(when, device):
    """The caller's edge tensors changed in place after hector.Graph() (to
    other valid ids) do not change the graph: it validated and owns a copy.
    (It used to keep views: the kernels then mixed the new ids with the
    derived arrays cached by the first run, and an out-of-range id written
    after the checks crashed hgt with a segfault.)"""
    d = _data(device)
    edge_index, edge_type = d.edge_index.clone(), d.edge_type.clone()
    node_type = d.node_type.clone()
    g = hector.Graph(edge_index, edge_type, node_type, N, num_etypes=R,
                     num_ntypes=T)
    lib, _, values, hypers = _setup("hgt", device, graph=g)
    if when == "after_first_run":
        first = lib.run(g, values, **hypers)["h"]
    edge_type.copy_((edge_type + 1) % R)
    edge_index.copy_(edge_index.flip(0))
    node_type.fill_(0)
    assert torch.equal(g.edge_type, d.edge_type)
    assert torch.equal(g.edge_index, d.edge_index)
    assert torch.equal(g.node_type, d.node_type)
    out = lib.run(g, values, **hypers)["h"]
    fresh = d.hector()
    _close(out, _interpret("hgt", fresh, values, hypers), torch.float32,
           "hgt on the graph as built")
    if when == "after_first_run":
        assert rel_err(out, first) <= 1e-6


GRAPH_INDEX = {
    "int32": lambda d: hector.Graph(d.edge_index.int(), d.edge_type.int(),
                                    d.node_type.int(), N, num_etypes=R,
                                    num_ntypes=T),
    "edge_index_transposed_storage": lambda d: hector.Graph(
        d.edge_index.t().contiguous().t(), d.edge_type, d.node_type, N,
        num_etypes=R, num_ntypes=T),
    "edge_type_expanded_stride0": lambda d: hector.Graph(
        d.edge_index, d.edge_type[:1].expand(d.num_edges), d.node_type, N,
        num_etypes=R, num_ntypes=T),
}


@pytest.mark.parametrize("case", list(GRAPH_INDEX))
def test_graph_unusual_index_tensors(case, device):
    """Index tensors of another integer dtype or layout give the graph of
    their int64 contiguous values."""
    d = _data(device)
    g = GRAPH_INDEX[case](d)
    if case == "edge_type_expanded_stride0":
        d.edge_type = d.edge_type[:1].expand(d.num_edges).contiguous()
    plain = d.hector()
    for name, a, b in zip(hector.graph.graph_array_names(),
                          g.kernel_arrays(), plain.kernel_arrays()):
        assert a.dtype == b.dtype and torch.equal(a, b), name
    lib, _, values, hypers = _setup("rgat", device, graph=g)
    out = lib.run(g, values, **hypers)["h"]
    assert rel_err(out, lib.run(plain, values, **hypers)["h"]) <= 1e-6
    _close(out, _interpret("rgat", plain, values, hypers), torch.float32,
           case)


def _rgcn_conv64(device, num_relations=R):
    """A seeded fp64 hector.nn.RGCNConv with a non-zero bias."""
    torch.manual_seed(0)
    conv = hnn.RGCNConv(IN, OUT, num_relations).double().to(device)
    with torch.no_grad():
        conv.bias.copy_(_randn(OUT, device, torch.float64, seed=5))
    return conv


def _nn_reference(conv, x, edge_index, edge_type):
    g = types.SimpleNamespace(src=edge_index[0], dst=edge_index[1],
                              edge_type=edge_type)
    return references.rgcn(g, x, conv.weight, conv.root, conv.bias)


def _noncontiguous_weight(conv):
    w = conv.weight.detach()
    conv.weight = torch.nn.Parameter(w.transpose(1, 2).contiguous()
                                     .transpose(1, 2))
    assert not conv.weight.is_contiguous()
    return conv


NN_LAYOUTS = {
    # (x, edge_index, edge_type, layer) -> the arguments as passed
    "x_transposed_view": lambda x, ei, et, m: (x.t().contiguous().t(), ei,
                                               et, m),
    "x_expanded_stride0": lambda x, ei, et, m: (x[:1].expand(N, IN), ei, et,
                                                m),
    "edge_index_noncontiguous": lambda x, ei, et, m: (
        x, ei.t().contiguous().t(), et, m),
    "edge_type_expanded_stride0": lambda x, ei, et, m: (
        x, ei, et[:1].expand(et.numel()), m),
    "weight_noncontiguous": lambda x, ei, et, m: (x, ei, et,
                                                  _noncontiguous_weight(m)),
    # Rows beyond the largest id: extra isolated nodes.
    "x_more_rows_than_ids": lambda x, ei, et, m: (
        torch.cat([x, x[:4] * 2]), ei, et, m),
}


@pytest.mark.parametrize("case", list(NN_LAYOUTS))
def test_nn_unusual_layouts(case, device):
    """hector.nn.RGCNConv (fp64) takes any strided x and index tensors, as
    PyG does, and computes PyG's formula (references.rgcn)."""
    d = _data(device)
    conv = _rgcn_conv64(device)
    x = _randn((N, IN), device, torch.float64, seed=3)
    x, ei, et, conv = NN_LAYOUTS[case](x, d.edge_index, d.edge_type, conv)
    out = conv(x, ei, et)
    _close(out, _nn_reference(conv, x, ei, et), torch.float64, case)


def _empty_graph(device, num_nodes):
    e = torch.empty(2, 0, dtype=torch.int64, device=device)
    node_type = torch.arange(num_nodes, device=device) % T
    return hector.Graph(e, e[0], node_type, num_nodes, num_etypes=R,
                        num_ntypes=T)


def _no_message_output(model, g, values):
    """h without any edge: the self term only (fp64)."""
    v = {k: t.double() for k, t in values.items()}
    if model == "hgt":
        gate = torch.sigmoid(v["skip"][g.node_type])[:, None]
        return (1 - gate) * v["x"]
    return v["x"] @ v["W_self"] + v["bias"]


@pytest.mark.parametrize("case", [f"{m}_{e}" for m in HYPERS
                                  for e in ("no_edges", "no_nodes")] +
                         ["nn_no_edges", "nn_no_nodes"])
def test_empty_graph(case, device):
    """0 edges (and 0 nodes): the output is the self term only (x W_self +
    bias; hgt's (1 - gate) x), the backward runs, every per-relation
    parameter gets a zero gradient."""
    model, _, what = case.partition("_")
    num_nodes = 0 if what == "no_nodes" else 5
    if model == "nn":
        conv = _rgcn_conv64(device)
        x = _randn((num_nodes, IN), device, torch.float64)
        e = torch.empty(2, 0, dtype=torch.int64, device=device)
        out = conv(x, e, e[0])
        _close(out, x @ conv.root + conv.bias, torch.float64, case)
        out.sum().backward()
        assert torch.equal(conv.weight.grad, torch.zeros_like(conv.weight))
        return
    g = _empty_graph(device, num_nodes)
    lib, _, values, hypers = _setup(model, device, graph=g)
    out, grads = _compare_with_interpreter(model, g, values, hypers,
                                           torch.float32, case)
    _close(out, _no_message_output(model, g, values).float(), torch.float32,
           f"{case}: closed form")
    for a in lib.info["arguments"]:
        if a["rows"] == "etype_rows":
            assert torch.equal(grads[a["name"]],
                               torch.zeros_like(grads[a["name"]])), a["name"]


def test_empty_graph_without_relations(device):
    """hector.Graph(no edges) has num_etypes=0 (the documented default), so
    W is [0, in, out]: the result is the self term (the GEMMs over zero
    relations do nothing)."""
    e = torch.empty(2, 0, dtype=torch.int64, device=device)
    g = hector.Graph(e, e[0], None, 5)
    assert g.num_etypes == 0
    lib, _, values, hypers = _setup("rgcn", device, graph=g)
    assert values["W"].shape == (0, 4, 4)
    out = lib.run(g, values, **hypers)["h"]
    _close(out, _no_message_output("rgcn", g, values).float(),
           torch.float32, "bias-only result")


@pytest.mark.parametrize("model", list(HYPERS))
def test_relation_without_edges(model, device):
    """The standard graph's last relation has no edge: the result is the
    interpreter's and that relation's parameter rows get exactly zero
    gradient."""
    lib, g, values, hypers = _setup(model, device)
    assert int((g.edge_type == R - 1).sum()) == 0
    _, grads = _compare_with_interpreter(model, g, values, hypers,
                                         torch.float32, model)
    for a in lib.info["arguments"]:
        if a["rows"] == "etype_rows":
            grad = grads[a["name"]]
            assert torch.equal(grad[R - 1], torch.zeros_like(grad[R - 1]))
            assert grad[:R - 1].abs().sum() > 0, a["name"]


@pytest.mark.parametrize("model", list(HYPERS))
def test_isolated_nodes(model, device):
    """The standard graph's last 3 nodes have no edge: their rows are the
    self term only; every row is the interpreter's."""
    lib, g, values, hypers = _setup(model, device)
    isolated = [v for v in range(N)
                if not ((g.src == v) | (g.dst == v)).any()]
    assert isolated == [N - 3, N - 2, N - 1]
    out, _ = _compare_with_interpreter(model, g, values, hypers,
                                       torch.float32, model)
    expected = _no_message_output(model, g, values)
    _close(out[isolated], expected[isolated].float(), torch.float32,
           f"{model}: isolated rows")


def _loops_and_multi_edges(device):
    """6 nodes, 2 relations, 2 node types: a doubled self-loop on 0, the
    edge 1 -> 0 three times, a self-loop on 3 and the edge 4 -> 3 twice
    (relation 1), 3 -> 4 once; node 5 isolated."""
    edges = [(0, 0, 0), (0, 0, 0), (1, 0, 0), (1, 0, 0), (1, 0, 0),
             (2, 0, 1), (3, 3, 1), (4, 3, 1), (4, 3, 1), (3, 4, 0)]
    t = torch.tensor(edges, device=device).t()
    node_type = torch.tensor([0, 1, 0, 1, 0, 1], device=device)
    return hector.Graph(t[:2], t[2], node_type, 6, num_etypes=2,
                        num_ntypes=2)


@pytest.mark.parametrize("model", list(HYPERS) + ["nn_rgcn"])
def test_self_loops_and_multi_edges(model, device):
    """Self-loops are ordinary edges and multi-edges count with their
    multiplicity: fp64 kernels against the interpreter and references.py
    at 1e-10."""
    g = _loops_and_multi_edges(device)
    if model == "nn_rgcn":
        conv = _rgcn_conv64(device, num_relations=2)
        x = _randn((6, IN), device, torch.float64, seed=3)
        out = conv(x, g.edge_index, g.edge_type)
        _close(out, _nn_reference(conv, x, g.edge_index, g.edge_type),
               torch.float64, model)
        # Node 0, relation 0: the mean over in-edges 0, 0, 1, 1, 1.
        mean = (2 * x[0] + 3 * x[1]) / 5 @ conv.weight[0]
        expected0 = mean + x[2] @ conv.weight[1] + x[0] @ conv.root + \
            conv.bias
        _close(out[0], expected0, torch.float64, "node 0 by hand")
        return
    lib, _, values, hypers = _setup(model, device, torch.float64, graph=g)
    _compare_with_interpreter(model, g, values, hypers, torch.float64, model)
    reference = getattr(references, model)
    extra = {} if model == "rgcn" else {"heads": hypers["heads"]}
    expected = reference(g, **values, **extra)
    _close(lib.run(g, values, **hypers)["h"], expected, torch.float64,
           f"{model} vs references.{model}")


def _out_neighbours(g, v):
    return set(g.dst[g.src == v].tolist())


@pytest.mark.parametrize("case", list(HYPERS) + ["nn_rgcn", "rgcn_bias_nan"])
def test_nan_inf_propagate(case, device):
    """NaN / Inf inputs run without an exception and reach the output where
    the math puts them: a NaN or Inf feature of node u makes the rows of u
    and of its out-neighbours non-finite, exactly as in the interpreter
    (the same non-finite positions), and leaves the other entries exact; a
    NaN bias entry makes its column NaN. The backward runs and has the
    interpreter's non-finite positions too."""
    nan_node, inf_node = 0, 6
    if case == "nn_rgcn":
        g = _data(device).hector()
        conv = _rgcn_conv64(device)
        x = _randn((N, IN), device, torch.float64)
    else:
        model = "rgcn" if case == "rgcn_bias_nan" else case
        lib, g, values, hypers = _setup(model, device, torch.float64)
        x = values["x"]
    if case == "rgcn_bias_nan":
        values["bias"][1] = float("nan")
    else:
        x[nan_node, 1] = float("nan")
        x[inf_node, 2] = float("inf")
    x.requires_grad_()

    if case == "nn_rgcn":
        out = conv(x, g.edge_index, g.edge_type)
        expected = _nn_reference(conv, x, g.edge_index, g.edge_type)
        dtype = torch.float64
    else:
        values["x"] = x
        out = lib.run(g, {k: v.float() for k, v in values.items()},
                      **hypers)["h"]
        expected = _interpret(model, g, values, hypers)
        dtype = torch.float32

    def same_non_finite(a, e, what):
        # The positions, not the kind: two correct implementations may
        # differ in NaN versus +-inf (a 0 * inf in one, a skipped term in
        # the other).
        finite = torch.isfinite(e)
        assert torch.equal(torch.isfinite(a), finite), what
        err = rel_err(a[finite], e[finite])
        assert err <= TOL[dtype], f"{what}: finite entries: {err:.2e}"

    same_non_finite(out, expected, f"{case}: h")
    if case == "rgcn_bias_nan":
        assert torch.isnan(out[:, 1]).all()
        assert torch.isfinite(out[:, [0, 2, 3]]).all()
    else:
        bad_rows = set((~torch.isfinite(out)).any(1).nonzero().flatten()
                       .tolist())
        assert bad_rows == ({nan_node, inf_node} |
                            _out_neighbours(g, nan_node) |
                            _out_neighbours(g, inf_node))
        assert len(bad_rows) < N
    grad, = torch.autograd.grad(out.sum(), x)
    grad_expected, = torch.autograd.grad(expected.sum(), x)
    same_non_finite(grad, grad_expected, f"{case}: d/d x")


@pytest.mark.parametrize("case", ["graph_to", "nn_layer_to"])
def test_moved_to_other_device(case, device):
    """A graph (or an nn layer, which caches one) built on one device and
    moved to another computes there correctly."""
    other = _other(device)
    if other.type == "meta":
        pytest.skip("needs a second real device (CUDA)")
    if case == "graph_to":
        g = _data(device).hector()
        moved = g.to(other)
        assert moved.device.type == other.type
        lib, _, values, hypers = _setup("rgat", other, graph=moved)
        out = lib.run(moved, values, **hypers)["h"]
        _close(out, _interpret("rgat", moved, values, hypers), torch.float32,
               case)
        return
    d = _data(device)
    conv = _rgcn_conv64(device)
    x = _randn((N, IN), device, torch.float64)
    conv(x, d.edge_index, d.edge_type)
    conv = conv.to(other)
    d, x = d.to(other), x.to(other)
    out = conv(x, d.edge_index, d.edge_type)
    assert out.device.type == other.type
    _close(out, _nn_reference(conv, x, d.edge_index, d.edge_type),
           torch.float64, case)

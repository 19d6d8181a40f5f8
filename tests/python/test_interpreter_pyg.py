"""The PyG-compatible models (models/*_pyg.hgnn, as compiled into generated/) run by
the interpreter against torch_geometric's RGCNConv, RGATConv and HGTConv
holding the same weights: forward, and the gradients of the input and of
every PyG parameter."""


import pytest
import torch

import hector
from conftest import (compare_forward_backward, generated_ir, random_graph,
                      random_typed_graph, randomize_parameters)

pyg = pytest.importorskip(
    "torch_geometric", reason="torch_geometric is not installed (see "
    "scripts/setup.sh for the pip command)")
from torch_geometric.nn import HGTConv, RGATConv, RGCNConv  # noqa: E402

IN_DIM, OUT_DIM = 5, 6
DTYPES = [torch.float64, torch.float32]


@pytest.fixture(scope="module")
def load():
    """load(name) -> the verified module of models/<name>.hgnn, as hectorc
    compiled it into generated/ (so this runs without hectorc)."""
    return lambda name: hector.load_module(generated_ir(name))


def _x(n, dim, dtype, device, seed=7):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, dim, generator=gen, dtype=torch.float64).to(
        dtype=dtype, device=device).requires_grad_()


@pytest.fixture
def no_segment_matmul():
    old = pyg.backend.use_segment_matmul
    pyg.backend.use_segment_matmul = False
    yield
    pyg.backend.use_segment_matmul = old


@pytest.mark.parametrize("dtype", DTYPES, ids=["fp64", "fp32"])
def test_rgcn_matches_pyg(load, dtype, device, no_segment_matmul):
    g = random_graph(seed=11, device=device)
    conv = RGCNConv(IN_DIM, OUT_DIM, g.num_etypes, aggr="mean")
    randomize_parameters(conv, 1)
    conv = conv.to(dtype=dtype, device=device)
    x = _x(g.num_nodes, IN_DIM, dtype, device)
    module, graph = load("rgcn_pyg"), g.hector()
    params = {"weight_": conv.weight, "root": conv.root, "bias": conv.bias}
    leaves = {"x": x, **dict(conv.named_parameters())}
    assert set(dict(conv.named_parameters())) == {"weight", "root", "bias"}

    def ours():
        return hector.interpret(module, graph, {"x": x}, params,
                                {"in_dim": IN_DIM, "out_dim": OUT_DIM})["h"]

    def theirs():
        return conv(x, g.edge_index, g.edge_type)

    compare_forward_backward(ours, theirs, leaves, dtype, "RGCNConv")


@pytest.mark.parametrize("heads", [1, 2])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp64", "fp32"])
def test_rgat_matches_pyg(load, dtype, heads, device):
    g = random_graph(seed=12, device=device)
    conv = RGATConv(IN_DIM, OUT_DIM, g.num_etypes, heads=heads,
                    attention_mechanism="across-relation",
                    attention_mode="additive-self-attention", dim=1,
                    concat=True)
    randomize_parameters(conv, 2)
    conv = conv.to(dtype=dtype, device=device)
    x = _x(g.num_nodes, IN_DIM, dtype, device)
    module, graph = load("rgat_pyg"), g.hector()
    params = {"weight_": conv.weight, "q": conv.q, "k": conv.k,
              "bias": conv.bias}
    # w, l1, b1, l2, b2 only serve RGATConv's `mod` variants.
    used = {"weight", "q", "k", "bias"}
    leaves = {"x": x, **{n: p for n, p in conv.named_parameters()
                         if n in used}}

    def ours():
        return hector.interpret(module, graph, {"x": x}, params,
                                {"in_dim": IN_DIM, "out_dim": OUT_DIM,
                                 "heads": heads})["h"]

    def theirs():
        return conv(x, g.edge_index, g.edge_type)

    compare_forward_backward(ours, theirs, leaves, dtype,
                             f"RGATConv heads={heads}")


def _hgt_params(conv, node_types, edge_types, heads):
    """HGTConv's parameters in hgt_pyg's layout (differentiable views of
    the PyG parameters, so gradients land on them)."""
    R, d = len(edge_types), OUT_DIM // heads

    def stack(lins, attr):
        return torch.stack([getattr(lins[t], attr) for t in node_types])

    return {
        "kqv_weight": stack(conv.kqv_lin.lins, "weight"),
        "kqv_bias": stack(conv.kqv_lin.lins, "bias"),
        "k_rel": conv.k_rel.weight.view(heads, R, d, d).transpose(0, 1),
        "v_rel": conv.v_rel.weight.view(heads, R, d, d).transpose(0, 1),
        "p_rel": torch.cat([conv.p_rel["__".join(et)] for et in edge_types]),
        "out_lin_weight": stack(conv.out_lin.lins, "weight"),
        "out_lin_bias": stack(conv.out_lin.lins, "bias"),
        "skip": torch.cat([conv.skip[t] for t in node_types]),
    }


@pytest.mark.parametrize("heads", [1, 2])
@pytest.mark.parametrize("dtype", DTYPES, ids=["fp64", "fp32"])
def test_hgt_matches_pyg(load, dtype, heads, device):
    g = random_typed_graph(seed=13, device=device)
    node_types = [f"t{i}" for i in range(g.num_ntypes)]
    edge_types = [(f"t{s}", f"r{r}", f"t{d}")
                  for r, (s, d) in enumerate(g.rel_types)]
    conv = HGTConv(OUT_DIM, OUT_DIM, (node_types, edge_types), heads=heads)
    randomize_parameters(conv, 3)
    conv = conv.to(dtype=dtype, device=device)
    x = _x(g.num_nodes, OUT_DIM, dtype, device)
    module, graph = load("hgt_pyg"), g.hector()

    # The flattened graph as PyG's dicts: nodes are grouped by type.
    nt = g.node_type
    offsets = {t: int((nt < i).sum()) for i, t in enumerate(node_types)}
    x_dict = {t: x[nt == i] for i, t in enumerate(node_types)}
    edge_index_dict = {}
    for r, (s, _, d) in enumerate(edge_types):
        mask = g.edge_type == r
        edge_index_dict[edge_types[r]] = torch.stack(
            [g.src[mask] - offsets[s], g.dst[mask] - offsets[d]])
    dst_types = [t for t in node_types if any(et[2] == t
                                              for et in edge_types)]
    leaves = {"x": x, **dict(conv.named_parameters())}

    def ours():
        h = hector.interpret(module, graph, {"x": x},
                             _hgt_params(conv, node_types, edge_types,
                                         heads),
                             {"in_dim": OUT_DIM, "heads": heads})["h"]
        return torch.cat([h[nt == node_types.index(t)] for t in dst_types])

    def theirs():
        out = conv(x_dict, edge_index_dict)
        return torch.cat([out[t] for t in dst_types])

    n = compare_forward_backward(ours, theirs, leaves, dtype,
                                 f"HGTConv heads={heads}")
    assert n == 1 + len(leaves) - 1

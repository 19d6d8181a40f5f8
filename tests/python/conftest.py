"""Shared fixtures for the Python tests: devices, random graphs, tolerances.

Run from the repository root with the extension built, e.g.
    HECTOR_BUILD_DIR=build PYTHONPATH=runtime/python python -m pytest tests/python
(the path to runtime/python is added below when hector is not importable).
"""

import os
import sys
from dataclasses import dataclass

import pytest
import torch

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TEST_MODELS = os.path.join(os.path.dirname(__file__), "models")
BUNDLED_MODELS = os.path.join(REPO_ROOT, "models")

try:
    import hector  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(REPO_ROOT, "runtime", "python"))
    import hector  # noqa: F401

# Relative error bounds per dtype (the interpreter is the oracle: it must be
# exact up to rounding against the hand-written references).
TOLERANCE = {torch.float64: 1e-10, torch.float32: 1e-5}


@pytest.fixture
def deterministic():
    """torch.use_deterministic_algorithms(True) for the test (the generated
    ops then use no float atomics: docs/python.md)."""
    before = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True)
    yield
    torch.use_deterministic_algorithms(before)


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    if request.param == "cuda" and not torch.cuda.is_available():
        pytest.skip("CUDA is not available")
    return torch.device(request.param)


@dataclass
class GraphData:
    """A random graph as plain tensors (PyG layout) plus its sizes."""
    edge_index: torch.Tensor
    edge_type: torch.Tensor
    node_type: torch.Tensor
    num_nodes: int
    num_etypes: int
    num_ntypes: int
    # For typed graphs: relation r joins node type rel_types[r][0] to
    # rel_types[r][1].
    rel_types: list = None

    @property
    def src(self):
        return self.edge_index[0]

    @property
    def dst(self):
        return self.edge_index[1]

    @property
    def num_edges(self):
        return self.edge_index.size(1)

    def to(self, device):
        return GraphData(self.edge_index.to(device), self.edge_type.to(device),
                         self.node_type.to(device), self.num_nodes,
                         self.num_etypes, self.num_ntypes, self.rel_types)

    def hector(self):
        return hector.Graph(self.edge_index, self.edge_type, self.node_type,
                            self.num_nodes, num_etypes=self.num_etypes,
                            num_ntypes=self.num_ntypes)


def random_graph(num_nodes=30, num_edges=90, num_etypes=4, num_ntypes=3,
                 seed=0, device="cpu"):
    """A random typed multigraph with every awkward case: the last 3 nodes
    are isolated, the last relation has no edge, the first 10 edges appear
    twice (multi-edges), and 5 self-loops are added."""
    gen = torch.Generator().manual_seed(seed)
    active = num_nodes - 3
    src = torch.randint(0, active, (num_edges,), generator=gen)
    dst = torch.randint(0, active, (num_edges,), generator=gen)
    etype = torch.randint(0, num_etypes - 1, (num_edges,), generator=gen)
    loops = torch.randint(0, active, (5,), generator=gen)
    src = torch.cat([src, src[:10], loops])
    dst = torch.cat([dst, dst[:10], loops])
    etype = torch.cat([etype, etype[:10],
                       torch.randint(0, num_etypes - 1, (5,), generator=gen)])
    node_type = torch.randint(0, num_ntypes, (num_nodes,), generator=gen)
    return GraphData(torch.stack([src, dst]), etype, node_type, num_nodes,
                     num_etypes, num_ntypes).to(device)


def with_hubs(g, degrees=(300, 129), seed=0):
    """`g` plus hub nodes: for each entry of `degrees`, that many extra
    edges into the destination of one existing edge, each copying that
    edge's relation and drawing its source among the nodes of its source's
    type (so typed relations stay typed). The hubs exceed the kernels'
    heavy-row limit (runtime/GraphArrays.h kHeavyRowEdges, 128), so the GPU
    kernels' heavy-row launches run."""
    gen = torch.Generator().manual_seed(seed)
    src, dst = g.edge_index[0].cpu(), g.edge_index[1].cpu()
    etype, ntype = g.edge_type.cpu(), g.node_type.cpu()
    srcs, dsts, types = [src], [dst], [etype]
    hubs = []
    for degree in degrees:
        # The first edge into a node that is not a hub yet.
        e = next(i for i in range(src.numel()) if int(dst[i]) not in hubs)
        hubs.append(int(dst[e]))
        candidates = torch.nonzero(ntype == ntype[src[e]]).flatten()
        pick = torch.randint(0, candidates.numel(), (degree,), generator=gen)
        srcs.append(candidates[pick])
        dsts.append(torch.full((degree,), int(dst[e]), dtype=torch.int64))
        types.append(torch.full((degree,), int(etype[e]), dtype=torch.int64))
    return GraphData(torch.stack([torch.cat(srcs), torch.cat(dsts)]),
                     torch.cat(types), ntype, g.num_nodes, g.num_etypes,
                     g.num_ntypes).to(g.edge_index.device)


def random_typed_graph(nodes_per_type=(9, 8, 7), rel_types=None,
                       edges_per_rel=25, seed=0, device="cpu"):
    """A heterograph flattened to one node range: nodes are grouped by type
    (type 0 first), and relation r joins type rel_types[r][0] to
    rel_types[r][1], as HGTConv's metadata requires. The last relation has
    no edge; the last node of every type is isolated; the first edges of
    each relation are doubled; relations within one type get self-loops."""
    if rel_types is None:
        rel_types = [(0, 1), (1, 0), (1, 1), (2, 0), (0, 2), (2, 1)]
    gen = torch.Generator().manual_seed(seed)
    offsets = [0]
    for n in nodes_per_type:
        offsets.append(offsets[-1] + n)
    srcs, dsts, types = [], [], []
    for r, (st, dt) in enumerate(rel_types):
        if r == len(rel_types) - 1:
            break  # a relation without edges
        ns, nd = nodes_per_type[st] - 1, nodes_per_type[dt] - 1
        s = torch.randint(0, ns, (edges_per_rel,), generator=gen) + offsets[st]
        d = torch.randint(0, nd, (edges_per_rel,), generator=gen) + offsets[dt]
        s, d = torch.cat([s, s[:4]]), torch.cat([d, d[:4]])
        if st == dt:
            v = torch.randint(0, ns, (3,), generator=gen) + offsets[st]
            s, d = torch.cat([s, v]), torch.cat([d, v])
        srcs.append(s)
        dsts.append(d)
        types.append(torch.full((s.numel(),), r, dtype=torch.int64))
    node_type = torch.cat([torch.full((n,), t, dtype=torch.int64)
                           for t, n in enumerate(nodes_per_type)])
    return GraphData(torch.stack([torch.cat(srcs), torch.cat(dsts)]),
                     torch.cat(types), node_type, offsets[-1], len(rel_types),
                     len(nodes_per_type), list(rel_types)).to(device)


def randomize_parameters(module, seed):
    """Random values for every parameter of a torch module (PyG initialises
    some to 0 or 1, which would hide mistakes)."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=gen,
                                dtype=torch.float64) * 0.5)


def rel_err(actual, expected):
    """||actual - expected|| / ||expected|| (absolute when expected is 0)."""
    actual = actual.detach().double()
    expected = expected.detach().double()
    scale = expected.norm().item()
    diff = (actual - expected).norm().item()
    return diff / scale if scale > 0 else diff


def assert_close(actual, expected, dtype, what, tol=None):
    assert actual is not None and expected is not None, what
    assert actual.shape == expected.shape, \
        f"{what}: shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    assert torch.isfinite(actual).all(), f"{what}: not finite"
    tol = TOLERANCE[dtype] if tol is None else tol
    err = rel_err(actual, expected)
    assert err <= tol, f"{what}: relative error {err:.3e} > {tol:.0e}"


def compare_forward_backward(run_a, run_b, leaves, dtype, what, seed=1,
                             tol=None):
    """Runs both implementations on the same leaves; compares the outputs
    and the gradient of a random projection of them w.r.t. every leaf."""
    out_a, out_b = run_a(), run_b()
    assert_close(out_a, out_b, dtype, f"{what}: forward", tol)
    gen = torch.Generator().manual_seed(seed)
    probe = torch.randn(out_b.shape, generator=gen, dtype=torch.float64)
    probe = probe.to(device=out_b.device, dtype=out_b.dtype)
    names = list(leaves)
    tensors = [leaves[n] for n in names]
    grads_a = torch.autograd.grad((out_a * probe).sum(), tensors,
                                  allow_unused=True)
    grads_b = torch.autograd.grad((out_b * probe).sum(), tensors,
                                  allow_unused=True)
    checked = 0
    for name, t, ga, gb in zip(names, tensors, grads_a, grads_b):
        ga = torch.zeros_like(t) if ga is None else ga
        gb = torch.zeros_like(t) if gb is None else gb
        assert_close(ga, gb, dtype, f"{what}: d/d {name}", tol)
        checked += 1
    return checked


GENERATED = os.path.join(REPO_ROOT, "generated")


def generated_ir(name):
    """The committed hectorc output for models/<name>.hgnn (kept fresh by
    the ctest `generated_is_fresh`): usable where hectorc is not built, such
    as the GPU machine."""
    return os.path.join(GENERATED, name, f"{name}.inter.ir")

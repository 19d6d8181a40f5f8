"""hector.Graph validates every argument: TypeError for a wrong type or
dtype, ValueError for a wrong shape, range or device, each message naming
the argument."""

import pytest
import torch

import hector


def ei(*pairs):
    return torch.tensor(pairs, dtype=torch.int64).t().reshape(2, -1)


EDGES = ei((0, 1), (1, 2), (2, 0))
TYPES = torch.tensor([0, 1, 0])


# (description, kwargs, exception, name the message must contain)
BAD = [
    ("edge_index is a list", dict(edge_index=[[0, 1], [1, 2]]), TypeError,
     "edge_index"),
    ("edge_index is float", dict(edge_index=EDGES.float()), TypeError,
     "edge_index"),
    ("edge_index is bool", dict(edge_index=EDGES.bool()), TypeError,
     "edge_index"),
    ("edge_index has 3 rows", dict(edge_index=torch.zeros(3, 3,
                                                          dtype=torch.long)),
     ValueError, "edge_index"),
    ("edge_index is 1-d", dict(edge_index=torch.zeros(6, dtype=torch.long)),
     ValueError, "edge_index"),
    ("edge_index has a negative id", dict(edge_index=ei((0, 1), (-1, 2),
                                                        (2, 0))),
     ValueError, "edge_index"),
    ("edge_index id >= num_nodes", dict(num_nodes=2), ValueError,
     "edge_index"),
    ("edge_type is a list", dict(edge_type=[0, 1, 0]), TypeError,
     "edge_type"),
    ("edge_type is float", dict(edge_type=TYPES.double()), TypeError,
     "edge_type"),
    ("edge_type too short", dict(edge_type=TYPES[:2]), ValueError,
     "edge_type"),
    ("edge_type is 2-d", dict(edge_type=TYPES.view(3, 1)), ValueError,
     "edge_type"),
    ("edge_type negative", dict(edge_type=torch.tensor([0, -1, 0])),
     ValueError, "edge_type"),
    ("edge_type >= num_etypes", dict(num_etypes=1), ValueError, "edge_type"),
    ("node_type is float", dict(node_type=torch.zeros(3)), TypeError,
     "node_type"),
    ("node_type is 2-d", dict(node_type=torch.zeros(3, 1, dtype=torch.long)),
     ValueError, "node_type"),
    ("node_type negative", dict(node_type=torch.tensor([0, -2, 0])),
     ValueError, "node_type"),
    ("node_type >= num_ntypes", dict(node_type=torch.tensor([0, 2, 1]),
                                     num_ntypes=2),
     ValueError, "node_type"),
    ("node_type length differs from num_nodes",
     dict(node_type=torch.tensor([0, 1, 0]), num_nodes=4), ValueError,
     "num_nodes"),
    ("node_type shorter than the ids", dict(node_type=torch.tensor([0, 1])),
     ValueError, "edge_index"),
    ("num_nodes is float", dict(num_nodes=3.0), TypeError, "num_nodes"),
    ("num_nodes is bool", dict(num_nodes=True), TypeError, "num_nodes"),
    ("num_nodes negative", dict(num_nodes=-1), ValueError, "num_nodes"),
    ("num_etypes is a string", dict(num_etypes="2"), TypeError,
     "num_etypes"),
    ("num_etypes negative", dict(num_etypes=-3), ValueError, "num_etypes"),
    ("num_ntypes is float", dict(num_ntypes=1.5), TypeError, "num_ntypes"),
    ("num_ntypes 0 without node_type", dict(num_ntypes=0), ValueError,
     "num_ntypes"),
    # The meta device stands in for a second device on CPU-only machines.
    ("edge_type on another device",
     dict(edge_type=torch.empty(3, dtype=torch.long, device="meta")),
     ValueError, "edge_type"),
    ("node_type on another device",
     dict(node_type=torch.empty(3, dtype=torch.long, device="meta")),
     ValueError, "node_type"),
]


def make(edge_index=EDGES, edge_type=TYPES, node_type=None, num_nodes=None,
         **kwargs):
    return hector.Graph(edge_index, edge_type, node_type, num_nodes, **kwargs)


@pytest.mark.parametrize("what,kwargs,exc,name", BAD,
                         ids=[b[0].replace(" ", "_") for b in BAD])
def test_invalid_argument_raises(what, kwargs, exc, name):
    with pytest.raises(exc) as info:
        make(**kwargs)
    assert type(info.value) is exc, what
    assert name in str(info.value), f"{what}: {info.value}"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_mixed_cpu_cuda_devices_raise():
    with pytest.raises(ValueError, match="edge_type"):
        make(edge_type=TYPES.cuda())
    with pytest.raises(ValueError, match="node_type"):
        make(node_type=torch.zeros(3, dtype=torch.long).cuda())


def test_defaults_are_inferred():
    g = make()
    assert (g.num_nodes, g.num_edges, g.num_etypes, g.num_ntypes) == \
        (3, 3, 2, 1)
    assert g.node_type.tolist() == [0, 0, 0]
    assert g.src.tolist() == [0, 1, 2] and g.dst.tolist() == [1, 2, 0]


def test_explicit_sizes_allow_isolated_nodes_and_empty_types():
    g = make(node_type=torch.tensor([0, 2, 0, 0, 1], dtype=torch.int32),
             num_etypes=5, num_ntypes=4)
    assert (g.num_nodes, g.num_etypes, g.num_ntypes) == (5, 5, 4)
    assert g.node_type.dtype == torch.int64
    cpp = g.cpp()
    assert cpp.in_degree().tolist() == [1, 1, 1, 0, 0]
    assert cpp.num_etypes == 5


def test_empty_graph():
    g = hector.Graph(torch.zeros(2, 0, dtype=torch.long),
                     torch.zeros(0, dtype=torch.long))
    assert (g.num_nodes, g.num_edges, g.num_etypes, g.num_ntypes) == \
        (0, 0, 0, 1)
    assert g.cpp().num_pairs == 0


def test_cpp_graph_derived_arrays():
    # Multi-edge 2->1 (r0) twice, self-loop 2->2, isolated node 3.
    g = hector.Graph(ei((0, 1), (2, 1), (2, 1), (1, 2), (2, 2)),
                     torch.tensor([0, 0, 0, 1, 1]), num_nodes=4)
    cpp = g.cpp()
    assert cpp.in_degree().tolist() == [0, 3, 2, 0]
    assert cpp.out_degree().tolist() == [1, 1, 3, 0]
    assert cpp.rel_in_degree().tolist() == [3, 3, 3, 2, 2]
    # Pairs in (etype, src) order: (r0,0) (r0,2) (r1,1) (r1,2).
    assert cpp.edge_pair().tolist() == [0, 1, 1, 2, 3]
    assert cpp.pair_src().tolist() == [0, 2, 1, 2]
    assert cpp.pair_etype().tolist() == [0, 0, 1, 1]


def test_cpp_graph_validates_too():
    """The C++ constructor re-checks what Python checked (direct callers)."""
    C = hector._ext.extension()
    z = torch.zeros(1, dtype=torch.long)
    with pytest.raises(ValueError, match="dst"):
        C.Graph(z, z + 5, z, torch.zeros(2, dtype=torch.long), 2, 1, 1)
    with pytest.raises(TypeError, match="etype"):
        C.Graph(z, z, z.float(), torch.zeros(2, dtype=torch.long), 2, 1, 1)

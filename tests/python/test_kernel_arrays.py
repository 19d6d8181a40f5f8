"""Graph.kernel_arrays(): every array the generated kernels read, checked
against a recomputation from the COO lists with plain Python/torch (one
node or type at a time), on random graphs with isolated nodes, an empty
relation, multi-edges and self-loops, on every device."""

import pytest
import torch

import hector
from hector.graph import graph_array_names

from conftest import random_graph, random_typed_graph

NAMES = ["src", "dst", "etype", "ntype", "in_degree", "out_degree",
         "rel_in_degree", "etype_sorted_eid", "etype_ptr", "dst_ptr",
         "dst_eid", "src_ptr", "src_eid", "pair_src", "pair_etype",
         "pair_ptr", "edge_pair", "ntype_sorted_nodes", "ntype_ptr",
         "edge_src_ntype", "edge_dst_ntype", "pair_src_ntype", "type_iota",
         "heavy_dst_rows", "heavy_src_rows", "dst_csr_src", "dst_csr_etype",
         "dst_csr_pair", "src_csr_dst", "src_csr_etype", "src_csr_pair",
         "heavy_dst_edge_ptr", "heavy_src_edge_ptr", "sum_chunk_ptr",
         "sum_chunk_src", "sum_chunk_dst", "sum_chunk_eid",
         "sum_chunk_etype_ptr", "sum_chunk_edge", "sum_edge_entry",
         "sum_edge_chunk", "sum_chunk_rel_in_degree", "pair_src_order",
         "pair_src_order_src", "pair_src_order_etype", "sum_chunk_dst_order",
         "sum_chunk_dst_order_dst", "sum_chunk_dst_order_etype"]
# GraphArrays.h's kHeavyRowEdges: nodes with more edges are "heavy".
HEAVY_ROW_EDGES = 128
# GraphArrays.h's kSumChunkEdges: the most edges of a summed-rows chunk.
SUM_CHUNK_EDGES = 64
FLOAT_ARRAYS = {"in_degree", "out_degree", "rel_in_degree",
                "sum_chunk_rel_in_degree"}


def segments(keys, num_segments):
    """(ids grouped by key, ascending within a key; [num_segments+1]
    pointers), one key at a time."""
    ids, ptr = [], [0]
    for k in range(num_segments):
        ids += [i for i, key in enumerate(keys) if key == k]
        ptr.append(len(ids))
    return ids, ptr


def reference(data):
    """{name: list} recomputed from the graph's lists."""
    src, dst = data.src.tolist(), data.dst.tolist()
    etype, ntype = data.edge_type.tolist(), data.node_type.tolist()
    n, r, t = data.num_nodes, data.num_etypes, data.num_ntypes
    ref = {"src": src, "dst": dst, "etype": etype, "ntype": ntype}
    ref["in_degree"] = [float(dst.count(v)) for v in range(n)]
    ref["out_degree"] = [float(src.count(v)) for v in range(n)]
    ref["rel_in_degree"] = [
        float(sum(1 for d, r2 in zip(dst, etype) if (d, r2) == (dv, rv)))
        for dv, rv in zip(dst, etype)]
    ref["etype_sorted_eid"], ref["etype_ptr"] = segments(etype, r)
    ref["dst_eid"], ref["dst_ptr"] = segments(dst, n)
    ref["src_eid"], ref["src_ptr"] = segments(src, n)
    pairs = sorted(set(zip(etype, src)))  # (etype, src) order
    ref["pair_etype"] = [p[0] for p in pairs]
    ref["pair_src"] = [p[1] for p in pairs]
    ref["pair_ptr"] = [sum(1 for p in pairs if p[0] < k)
                       for k in range(r + 1)]
    ref["edge_pair"] = [pairs.index((e, s)) for s, e in zip(src, etype)]
    ref["pair_src_order"] = sorted(range(len(pairs)),
                                   key=lambda p: (pairs[p][1], pairs[p][0]))
    ref["pair_src_order_src"] = [pairs[p][1] for p in ref["pair_src_order"]]
    ref["pair_src_order_etype"] = [pairs[p][0]
                                   for p in ref["pair_src_order"]]
    ref["ntype_sorted_nodes"], ref["ntype_ptr"] = segments(ntype, t)
    ref["edge_src_ntype"] = [ntype[s] for s in src]
    ref["edge_dst_ntype"] = [ntype[d] for d in dst]
    ref["pair_src_ntype"] = [ntype[s] for s in ref["pair_src"]]
    ref["type_iota"] = list(range(max(r, t) + 1))
    # Largest degree first, ties by ascending id.
    for side, ends in (("dst", dst), ("src", src)):
        heavy = [v for v in range(n) if ends.count(v) > HEAVY_ROW_EDGES]
        ref[f"heavy_{side}_rows"] = sorted(heavy,
                                           key=lambda v: (-ends.count(v), v))
    for side, ends in (("dst", dst), ("src", src)):
        ptr = [0]
        for v in ref[f"heavy_{side}_rows"]:
            ptr.append(ptr[-1] + ends.count(v))
        ref[f"heavy_{side}_edge_ptr"] = ptr
    # Each CSR position's edge attributes (one edge at a time).
    for side, eids, other in (("dst", ref["dst_eid"], src),
                              ("src", ref["src_eid"], dst)):
        end = "src" if side == "dst" else "dst"
        ref[f"{side}_csr_{end}"] = [other[i] for i in eids]
        ref[f"{side}_csr_etype"] = [etype[i] for i in eids]
        ref[f"{side}_csr_pair"] = [ref["edge_pair"][i] for i in eids]
    # (etype, dst) segments in that order, ascending edge ids within one,
    # cut into chunks of at most SUM_CHUNK_EDGES edges.
    order = sorted(range(len(src)), key=lambda i: (etype[i], dst[i], i))
    ref["sum_chunk_src"] = [src[i] for i in order]
    ref["sum_chunk_edge"] = list(order)
    ref["sum_edge_entry"] = [order.index(i) for i in range(len(order))]
    ptr, chunk_eid = [], []
    for k, i in enumerate(order):
        seg_start = next(j for j in range(k + 1)
                         if (etype[order[j]], dst[order[j]]) ==
                         (etype[i], dst[i]))
        if (k - seg_start) % SUM_CHUNK_EDGES == 0:
            ptr.append(k)
            chunk_eid.append(i)
    ref["sum_chunk_ptr"] = ptr + [len(order)]
    ref["sum_chunk_eid"] = chunk_eid
    chunk_of_entry = [sum(1 for p in ptr if p <= k) - 1
                      for k in range(len(order))]
    ref["sum_edge_chunk"] = [chunk_of_entry[order.index(i)]
                             for i in range(len(order))]
    ref["sum_chunk_dst"] = [dst[i] for i in chunk_eid]
    ref["sum_chunk_rel_in_degree"] = [ref["rel_in_degree"][i]
                                      for i in chunk_eid]
    ref["sum_chunk_dst_order"] = sorted(
        range(len(chunk_eid)),
        key=lambda c: (dst[chunk_eid[c]], etype[chunk_eid[c]], c))
    ref["sum_chunk_dst_order_dst"] = [dst[chunk_eid[c]]
                                      for c in ref["sum_chunk_dst_order"]]
    ref["sum_chunk_dst_order_etype"] = [etype[chunk_eid[c]]
                                        for c in ref["sum_chunk_dst_order"]]
    ref["sum_chunk_etype_ptr"] = [
        sum(1 for i in chunk_eid if etype[i] < k) for k in range(r + 1)]
    return ref


def no_edges(device):
    """5 nodes of 2 types, 3 relations, no edge."""
    g = random_graph(device=device)
    g.edge_index = g.edge_index[:, :0]
    g.edge_type = g.edge_type[:0]
    g.num_nodes, g.num_etypes, g.num_ntypes = 5, 3, 2
    g.node_type = torch.tensor([1, 0, 1, 1, 0], device=device)
    return g


def hub_segment(device):
    """A segment longer than two chunks: 140 edges into node 2 of
    relation 1, among a few others."""
    g = random_graph(device=device)
    src = torch.tensor([0, 1] * 70 + [3, 4, 2], device=device)
    dst = torch.tensor([2] * 140 + [2, 0, 4], device=device)
    g.edge_index = torch.stack([src, dst])
    g.edge_type = torch.tensor([1] * 140 + [0, 1, 1], device=device)
    g.num_nodes, g.num_etypes, g.num_ntypes = 5, 2, 1
    g.node_type = torch.zeros(5, dtype=torch.int64, device=device)
    return g


GRAPHS = {
    "random": lambda device: random_graph(device=device),
    "hub_segment": hub_segment,
    "random_seed1": lambda device: random_graph(
        num_nodes=17, num_edges=40, num_etypes=3, num_ntypes=2, seed=1,
        device=device),
    "typed": lambda device: random_typed_graph(device=device),
    "no_edges": no_edges,
}


def test_graph_array_names():
    assert graph_array_names() == NAMES


@pytest.mark.parametrize("graph", sorted(GRAPHS))
def test_kernel_arrays_match_recomputation(graph, device):
    data = GRAPHS[graph](device)
    g = data.hector()
    arrays = g.kernel_arrays()
    assert len(arrays) == len(NAMES)
    ref = reference(data)
    for name, t in zip(NAMES, arrays):
        want = torch.float32 if name in FLOAT_ARRAYS else torch.int64
        assert t.dtype == want, name
        assert t.device.type == device.type, name
        assert t.dim() == 1 and t.is_contiguous(), name
        assert t.tolist() == ref[name], name
    assert g.cpp().num_pairs == len(ref["pair_src"])


def test_kernel_arrays_agree_with_the_graph_accessors(device):
    """The pair arrays are the graph's own; the degrees are float copies."""
    g = random_graph(device=device).hector()
    arrays = dict(zip(NAMES, g.kernel_arrays()))
    cpp = g.cpp()
    assert torch.equal(arrays["edge_pair"], cpp.edge_pair())
    assert torch.equal(arrays["pair_src"], cpp.pair_src())
    assert torch.equal(arrays["pair_etype"], cpp.pair_etype())
    assert torch.equal(arrays["in_degree"], cpp.in_degree().float())
    assert torch.equal(arrays["rel_in_degree"], cpp.rel_in_degree().float())
    # Pairs of one relation are contiguous and ascending by src.
    ptr = arrays["pair_ptr"].tolist()
    for r in range(g.num_etypes):
        seg = slice(ptr[r], ptr[r + 1])
        assert (arrays["pair_etype"][seg] == r).all()
        s = arrays["pair_src"][seg]
        assert (s[1:] > s[:-1]).all()


def test_heavy_rows_are_the_nodes_above_the_limit(device):
    """Node 0 gets 129 incoming edges (heavy), node 1 exactly 128 (not);
    node 2 sends 200 (heavy as a source)."""
    src = [2] * 129 + [3] * 128 + [2] * 71
    dst = [0] * 129 + [1] * 128 + [3] * 71
    g = hector.Graph(torch.tensor([src, dst], device=device),
                     torch.zeros(len(src), dtype=torch.long, device=device))
    arrays = dict(zip(NAMES, g.kernel_arrays()))
    assert arrays["heavy_dst_rows"].tolist() == [0]
    assert arrays["heavy_src_rows"].tolist() == [2]  # node 3 sends 128
    assert arrays["heavy_dst_edge_ptr"].tolist() == [0, 129]
    assert arrays["heavy_src_edge_ptr"].tolist() == [0, 200]


def test_heavy_edge_pointers_run_over_several_heavy_rows(device):
    """Nodes 4 and 1 get 300 and 130 incoming edges, node 6 130 as well:
    heavy rows [4, 1, 6] (largest first, ties by id), their edges laid end
    to end at 0, 300, 430, 560."""
    dst = [6] * 130 + [4] * 300 + [1] * 130 + [0] * 5
    src = [2] * len(dst)
    g = hector.Graph(torch.tensor([src, dst], device=device),
                     torch.zeros(len(src), dtype=torch.long, device=device))
    arrays = dict(zip(NAMES, g.kernel_arrays()))
    assert arrays["heavy_dst_rows"].tolist() == [4, 1, 6]
    assert arrays["heavy_dst_edge_ptr"].tolist() == [0, 300, 430, 560]
    assert arrays["heavy_src_edge_ptr"].tolist() == [0, 565]


def test_kernel_arrays_are_cached(device):
    g = random_graph(device=device).hector()
    first = g.kernel_arrays()
    second = g.kernel_arrays()
    assert [t.data_ptr() for t in first] == [t.data_ptr() for t in second]


def test_kernel_arrays_of_a_graph_without_node_types(device):
    g = hector.Graph(torch.tensor([[0, 2, 2], [1, 1, 0]], device=device),
                     torch.tensor([1, 0, 1], device=device))
    arrays = dict(zip(NAMES, g.kernel_arrays()))
    assert arrays["ntype_ptr"].tolist() == [0, 3]
    assert arrays["ntype_sorted_nodes"].tolist() == [0, 1, 2]
    assert arrays["pair_src"].tolist() == [2, 0, 2]
    assert arrays["pair_etype"].tolist() == [0, 1, 1]
    assert arrays["edge_pair"].tolist() == [1, 0, 2]
    assert arrays["type_iota"].tolist() == [0, 1, 2]


def by_destination(data):
    """`data` with its edges in the "dst" numbering: sorted by (destination,
    edge type), ties in the given order (Python's sort is stable)."""
    src, dst = data.src.tolist(), data.dst.tolist()
    etype = data.edge_type.tolist()
    order = sorted(range(len(src)), key=lambda e: (dst[e], etype[e]))
    index = torch.tensor(order, dtype=torch.long,
                         device=data.edge_index.device)
    return type(data)(data.edge_index[:, index], data.edge_type[index],
                      data.node_type, data.num_nodes, data.num_etypes,
                      data.num_ntypes)


@pytest.mark.parametrize("graph", sorted(GRAPHS))
def test_destination_ordered_arrays_are_those_of_the_sorted_graph(graph,
                                                                   device):
    """kernel_arrays("dst") is, array by array, what the given numbering of
    the graph with its edges sorted by (dst, etype) would be; in it every
    node's incoming edges are consecutive (dst_eid is the identity)."""
    data = GRAPHS[graph](device)
    g = data.hector()
    arrays = g.kernel_arrays("dst")
    ref = reference(by_destination(data))
    for name, t in zip(NAMES, arrays):
        assert t.device.type == device.type, name
        assert t.dim() == 1 and t.is_contiguous(), name
        assert t.tolist() == ref[name], name
    assert ref["dst_eid"] == list(range(g.num_edges))
    # ... and shares type_iota's storage, which tells the kernels so.
    named = dict(zip(NAMES, arrays))
    if g.num_edges:
        assert named["dst_eid"].data_ptr() == named["type_iota"].data_ptr()
        # The CSR-position arrays are the per-edge ones, not copies.
        for csr, per_edge in (("dst_csr_src", "src"),
                              ("dst_csr_etype", "etype"),
                              ("dst_csr_pair", "edge_pair")):
            assert named[csr].data_ptr() == named[per_edge].data_ptr(), csr
    # Cached per order, apart from the given numbering's.
    again = g.kernel_arrays("dst")
    assert [t.data_ptr() for t in again] == [t.data_ptr() for t in arrays]
    given = dict(zip(NAMES, g.kernel_arrays()))
    assert given["src"].tolist() == data.src.tolist()


@pytest.mark.parametrize("order", ["given", "dst"])
def test_nodes_numbered_by_type_are_their_own_type_order(order, device):
    """A heterograph flattened one type after another (conftest's typed
    graph) has ntype_sorted_nodes 0, 1, 2, ... as the start of type_iota's
    storage, in either edge numbering: the kernels see that and run the
    node-type GEMMs on rows in place. Interleaved types keep a sorted copy
    of their own."""
    g = random_typed_graph(device=device).hector()
    named = dict(zip(NAMES, g.kernel_arrays(order)))
    assert named["ntype_sorted_nodes"].tolist() == list(range(g.num_nodes))
    assert (named["ntype_sorted_nodes"].data_ptr()
            == named["type_iota"].data_ptr())
    assert named["type_iota"].numel() == max(g.num_etypes, g.num_ntypes) + 1
    mixed = random_graph(device=device)
    assert mixed.node_type.diff().lt(0).any(), "types must interleave"
    named = dict(zip(NAMES, mixed.hector().kernel_arrays(order)))
    assert (named["ntype_sorted_nodes"].data_ptr()
            != named["type_iota"].data_ptr())
    assert named["ntype_sorted_nodes"].tolist() == sorted(
        range(mixed.num_nodes), key=lambda v: mixed.node_type[v].item())


def test_an_unknown_edge_order_is_rejected(device):
    g = random_graph(device=device).hector()
    with pytest.raises(ValueError, match="edge_order: expected 'given' or "
                       "'dst', got 'src'"):
        g.kernel_arrays("src")

"""Tests of hector.datasets: synthetic benchmark shapes and graph loaders.

The module is imported as ``hector.datasets`` when the package imports;
otherwise it is loaded by file path (it needs nothing else of the package
except for ``as_graph``).
"""

import importlib
import importlib.util
import os
import sys
import time

import numpy as np
import pytest
import torch

_HERE = os.path.dirname(os.path.abspath(__file__))
_MODULE_PATH = os.path.join(_HERE, "..", "..", "runtime", "python", "hector",
                            "datasets.py")


def _load_datasets():
    try:
        return importlib.import_module("hector.datasets"), True
    except Exception:  # package missing or broken: load the file alone
        name = "_hector_datasets_standalone"
        if name in sys.modules:
            return sys.modules[name], False
        spec = importlib.util.spec_from_file_location(name, _MODULE_PATH)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod, False


ds, _IN_PACKAGE = _load_datasets()

# Exact counts: (nodes, node types, edges, relations).
EXACT = {
    "aifb": (7_262, 7, 48_810, 104),
    "mutag": (27_163, 5, 148_100, 50),
    "bgs": (94_806, 27, 672_884, 122),
    "fb15k": (14_541, 1, 620_232, 474),
    "biokg": (93_773, 5, 4_762_678, 51),
    "am": (1_885_136, 7, 5_668_682, 108),
    "mag": (1_939_743, 4, 21_111_007, 4),
    "wikikg2": (2_500_604, 1, 16_109_182, 535),
}
SMALL = ["aifb", "mutag", "bgs", "fb15k"]  # generated at full scale here
BIG = ["biokg", "am", "mag", "wikikg2"]     # generated at BIG_SCALE here
BIG_SCALE = 0.02


def _expected_counts(name, scale):
    n, t, e, r = EXACT[name]
    if scale == 1.0:
        return n, e
    return max(t, int(round(n * scale))), max(1, int(round(e * scale)))


def _check_structure(g, name, scale):
    n, t, e, r = EXACT[name]
    en, ee = _expected_counts(name, scale)
    assert g.name == name
    assert (g.num_nodes, g.num_edges) == (en, ee)
    assert (g.num_ntypes, g.num_etypes) == (t, r)
    assert g.edge_index.shape == (2, ee)
    assert g.edge_type.shape == (ee,) and g.node_type.shape == (en,)
    for x in (g.edge_index, g.edge_type, g.node_type):
        assert x.dtype == torch.int64
    g.validate()
    # node types: contiguous blocks, every type non-empty
    assert bool((g.node_type[1:] >= g.node_type[:-1]).all())
    assert int(torch.bincount(g.node_type, minlength=t).min()) >= 1
    # every relation joins exactly one src type to one dst type
    for side in (0, 1):
        key = g.edge_type * t + g.node_type[g.edge_index[side]]
        per_rel = torch.bincount(torch.unique(key) // t, minlength=r)
        assert int(per_rel.max()) <= 1, f"a relation spans several types ({side})"


def test_table_is_exact():
    assert ds.names() == list(EXACT)
    for name, (n, t, e, r) in EXACT.items():
        s = ds.shape(name)
        assert (s.num_nodes, s.num_ntypes, s.num_edges, s.num_etypes) == (n, t, e, r)
        assert 0.0 < s.compaction <= 1.0
        if s.ntype_sizes is not None:
            assert len(s.ntype_sizes) == t and sum(s.ntype_sizes) == n
        if s.relations is not None:
            assert len(s.relations) == r and sum(x[2] for x in s.relations) == e
    assert ds.shape("am").compaction == 0.57
    assert ds.shape("fb15k").compaction == 0.26
    assert ds.shape("OGBN-MAG").name == "mag"
    assert ds.scaled_counts("wikikg2") == (2_500_604, 16_109_182)
    assert ds.scaled_counts("am", 0.02) == _expected_counts("am", 0.02)


@pytest.mark.parametrize("name", SMALL)
def test_small_shapes_full_scale(name):
    g = ds.synthetic(name, seed=0)
    _check_structure(g, name, 1.0)
    # every relation has an edge at full scale
    assert int(torch.bincount(g.edge_type, minlength=g.num_etypes).min()) >= 1
    assert abs(g.compaction_ratio() - ds.shape(name).compaction) <= 0.05


@pytest.mark.parametrize("name", BIG)
def test_big_shapes_scaled(name):
    g = ds.synthetic(name, seed=0, scale=BIG_SCALE)
    _check_structure(g, name, BIG_SCALE)
    assert abs(g.compaction_ratio() - ds.shape(name).compaction) <= 0.05


def test_compaction_targets_of_the_paper():
    assert abs(ds.synthetic("fb15k").compaction_ratio() - 0.26) <= 0.05
    for scale in (0.01, 0.05):
        assert abs(ds.synthetic("am", scale=scale).compaction_ratio() - 0.57) <= 0.05
    assert abs(ds.synthetic("fb15k", scale=0.1).compaction_ratio() - 0.26) <= 0.05


def test_mag_keeps_its_real_structure():
    s = ds.shape("mag")
    g = ds.synthetic("mag", scale=0.01)
    _check_structure(g, "mag", 0.01)
    sizes = torch.bincount(g.node_type, minlength=4).tolist()
    for got, real in zip(sizes, s.ntype_sizes):
        assert abs(got - real * 0.01) <= 1
    for r, (st, dt, _) in enumerate(s.relations):
        mask = g.edge_type == r
        assert bool((g.node_type[g.edge_index[0, mask]] == st).all())
        assert bool((g.node_type[g.edge_index[1, mask]] == dt).all())


def test_deterministic_per_seed():
    a = ds.synthetic("aifb", seed=3)
    b = ds.synthetic("aifb", seed=3)
    c = ds.synthetic("aifb", seed=4)
    for x, y in ((a.edge_index, b.edge_index), (a.edge_type, b.edge_type),
                 (a.node_type, b.node_type)):
        assert torch.equal(x, y)
    assert not torch.equal(a.edge_index, c.edge_index)
    a = ds.synthetic("wikikg2", seed=1, scale=0.01)
    b = ds.synthetic("wikikg2", seed=1, scale=0.01)
    assert torch.equal(a.edge_index, b.edge_index)
    assert torch.equal(a.edge_type, b.edge_type)


@pytest.mark.parametrize("name,scale", [("fb15k", 1.0), ("bgs", 1.0),
                                        ("am", 0.05), ("wikikg2", 0.02)])
def test_power_law_degrees(name, scale):
    g = ds.synthetic(name, scale=scale)
    for deg in (g.in_degree(), g.out_degree()):
        deg = deg.to(torch.float64)
        mean = float(deg.mean())
        assert float(deg.max()) >= 20 * mean
        # the top 1% of nodes hold a large share of the edge endpoints
        k = max(1, g.num_nodes // 100)
        top = float(torch.topk(deg, k).values.sum())
        assert top / float(deg.sum()) >= 0.10


def test_scale_keeps_types_and_relations():
    g = ds.synthetic("wikikg2", scale=1e-6)  # fewer edges than relations
    assert (g.num_nodes, g.num_edges) == (3, 16)
    assert g.num_etypes == 535 and g.num_ntypes == 1
    g.validate()
    g = ds.synthetic("bgs", scale=1e-4)
    assert g.num_nodes == 27 and torch.equal(g.node_type, torch.arange(27))
    g.validate()


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown dataset 'cora'"):
        ds.synthetic("cora")
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="scale"):
            ds.synthetic("aifb", scale=bad)
    with pytest.raises(TypeError, match="seed"):
        ds.synthetic("aifb", seed=1.5)


def test_compaction_ratio_by_hand():
    g = ds.GraphData(edge_index=torch.tensor([[0, 0, 0, 1], [1, 2, 2, 0]]),
                     edge_type=torch.tensor([0, 0, 1, 0]),
                     node_type=torch.tensor([0, 0, 0]), num_nodes=3,
                     num_etypes=2, num_ntypes=1)
    assert g.num_pairs() == 3
    assert g.compaction_ratio() == pytest.approx(0.75)
    assert ds.SyntheticGraph is ds.GraphData


# --------------------------------------------------------------------------
# loaders
# --------------------------------------------------------------------------


def test_npz_round_trip(tmp_path):
    g = ds.synthetic("mutag", scale=0.05, seed=2)
    path = tmp_path / "g.npz"
    ds.save_npz(g, path)
    h = ds.load_npz(path)
    assert torch.equal(g.edge_index, h.edge_index)
    assert torch.equal(g.edge_type, h.edge_type)
    assert torch.equal(g.node_type, h.node_type)
    assert (h.num_nodes, h.num_etypes, h.num_ntypes) == \
        (g.num_nodes, g.num_etypes, g.num_ntypes)


def test_npz_minimal_keys(tmp_path):
    path = tmp_path / "min.npz"
    np.savez(path, edge_index=np.array([[0, 3], [1, 2]], dtype=np.int32),
             edge_type=np.array([1, 0], dtype=np.uint8))
    g = ds.load_npz(path)
    assert g.num_nodes == 4 and g.num_etypes == 2 and g.num_ntypes == 1
    assert g.edge_index.dtype == torch.int64
    assert torch.equal(g.node_type, torch.zeros(4, dtype=torch.int64))


@pytest.mark.parametrize("arrays,match", [
    (dict(edge_type=np.zeros(2, np.int64)), "missing key 'edge_index'"),
    (dict(edge_index=np.zeros((2, 2), np.int64)), "missing key 'edge_type'"),
    (dict(edge_index=np.zeros((3, 2), np.int64), edge_type=np.zeros(2, np.int64)),
     r"'edge_index' must have shape \[2, E\]"),
    (dict(edge_index=np.zeros((2, 2), np.float32), edge_type=np.zeros(2, np.int64)),
     "'edge_index' must hold integers"),
    (dict(edge_index=np.zeros((2, 2), np.int64), edge_type=np.zeros(3, np.int64)),
     r"'edge_type' must have shape \[2\]"),
    (dict(edge_index=np.array([[0, 5], [1, 1]]), edge_type=np.zeros(2, np.int64),
          node_type=np.zeros(3, np.int64)), r"outside \[0, 3\)"),
    (dict(edge_index=np.zeros((2, 2), np.int64), edge_type=np.array([0, -1])),
     "'edge_type' has negative ids"),
    (dict(edge_index=np.zeros((2, 2), np.int64), edge_type=np.zeros(2, np.int64),
          node_type=np.zeros((1, 1), np.int64)), "'node_type' must have shape"),
    (dict(edge_index=np.zeros((2, 2), np.int64), edge_type=np.zeros(2, np.int64),
          node_type=np.zeros(1, np.int64), num_nodes=np.int64(2)),
     "'num_nodes' is 2"),
])
def test_npz_errors_name_the_problem(tmp_path, arrays, match):
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match=match):
        ds.load_npz(path)


def test_npz_not_an_archive(tmp_path):
    path = tmp_path / "junk.npz"
    path.write_text("not a zip")
    with pytest.raises(ValueError, match="junk.npz"):
        ds.load_npz(path)


def test_tsv_round_trip(tmp_path):
    path = tmp_path / "kg.tsv"
    path.write_text("# a comment\n"
                    "alice\tknows\tbob\n"
                    "\n"
                    "bob\tknows\tcarol\r\n"
                    "  # indented comment\n"
                    "carol\tlikes\t7\n"
                    "7\tknows\talice\n")
    g, ent, rel = ds.load_tsv(path)
    assert ent == {"alice": 0, "bob": 1, "carol": 2, "7": 3}
    assert rel == {"knows": 0, "likes": 1}
    assert g.edge_index.tolist() == [[0, 1, 2, 3], [1, 2, 3, 0]]
    assert g.edge_type.tolist() == [0, 0, 1, 0]
    assert (g.num_nodes, g.num_etypes, g.num_ntypes) == (4, 2, 1)
    assert g.node_type.tolist() == [0, 0, 0, 0]
    g.validate()


def test_tsv_synthetic_round_trip(tmp_path):
    g = ds.synthetic("fb15k", scale=0.01)
    path = tmp_path / "fb.tsv"
    with open(path, "w") as f:
        for (h, t), r in zip(g.edge_index.t().tolist(), g.edge_type.tolist()):
            f.write(f"e{h}\tr{r}\te{t}\n")
    h, ent, rel = ds.load_tsv(path)
    inv_e = torch.tensor([int(k[1:]) for k in ent])  # id -> original node
    inv_r = torch.tensor([int(k[1:]) for k in rel])
    assert torch.equal(inv_e[h.edge_index], g.edge_index)
    assert torch.equal(inv_r[h.edge_type], g.edge_type)
    assert h.compaction_ratio() == pytest.approx(g.compaction_ratio())


@pytest.mark.parametrize("text,line,match", [
    ("a\tr\tb\na\tr\n", 2, "expected 3 tab-separated fields"),
    ("# c\n\na\tr\tb\tc\n", 3, "got 4"),
    ("a r b\n", 1, "got 1"),
    ("a\t\tb\n", 1, "empty field"),
])
def test_tsv_errors_name_path_and_line(tmp_path, text, line, match):
    path = tmp_path / "bad.tsv"
    path.write_text(text)
    with pytest.raises(ValueError, match=match) as info:
        ds.load_tsv(path)
    assert f"{path}:{line}:" in str(info.value)


def test_tsv_empty(tmp_path):
    path = tmp_path / "empty.tsv"
    path.write_text("# nothing\n\n")
    with pytest.raises(ValueError, match="no triples"):
        ds.load_tsv(path)


def test_from_pyg():
    pyg_data = pytest.importorskip("torch_geometric.data")
    data = pyg_data.HeteroData()
    data["paper"].x = torch.randn(4, 3)
    data["author"].num_nodes = 3
    data["field"].num_nodes = 2
    data["author", "writes", "paper"].edge_index = torch.tensor([[0, 2, 2], [1, 0, 3]])
    data["paper", "cites", "paper"].edge_index = torch.tensor([[0, 3], [1, 2]])
    data["paper", "has", "field"].edge_index = torch.tensor([[3], [1]], dtype=torch.int32)
    g, ntypes, etypes, offsets = ds.from_pyg(data)
    assert ntypes == ["paper", "author", "field"]
    assert etypes == [("author", "writes", "paper"), ("paper", "cites", "paper"),
                      ("paper", "has", "field")]
    assert offsets == [0, 4, 7, 9]
    assert (g.num_nodes, g.num_etypes, g.num_ntypes, g.num_edges) == (9, 3, 3, 6)
    assert g.node_type.tolist() == [0, 0, 0, 0, 1, 1, 1, 2, 2]
    assert g.edge_index.tolist() == [[4, 6, 6, 0, 3, 3], [1, 0, 3, 1, 2, 8]]
    assert g.edge_type.tolist() == [0, 0, 0, 1, 1, 2]
    g.validate()

    bad = pyg_data.HeteroData()
    bad["a"].num_nodes = 2
    bad["a", "r", "a"].edge_index = torch.tensor([[0], [2]])
    with pytest.raises(ValueError, match="destination ids"):
        ds.from_pyg(bad)
    with pytest.raises(TypeError, match="HeteroData"):
        ds.from_pyg(object())


def test_module_imports_only_torch_and_stdlib_at_import_time():
    import ast

    tree = ast.parse(open(_MODULE_PATH).read())
    top = set()
    for node in tree.body:  # module level only; functions import lazily
        if isinstance(node, ast.Import):
            top.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import at module level"
            top.add(node.module.split(".")[0])
    assert top <= {"dataclasses", "math", "operator", "os", "typing", "torch"}, top


def test_as_graph():
    if not _IN_PACKAGE:
        pytest.skip("hector package does not import")
    try:
        importlib.import_module("hector.graph")
    except Exception as exc:  # the package's Graph is not ready
        pytest.skip(f"hector.graph does not import: {exc}")
    g = ds.synthetic("aifb", scale=0.05)
    assert g.as_graph() is not None


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_wikikg2_fast_and_deterministic():
    ds.synthetic("aifb", device="cuda")  # CUDA context and kernels warm-up
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    g = ds.synthetic("wikikg2", seed=0, device="cuda")
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    assert elapsed < 10.0, f"wikikg2 took {elapsed:.2f} s"
    assert g.edge_index.is_cuda and g.node_type.is_cuda
    _check_structure(g, "wikikg2", 1.0)
    assert abs(g.compaction_ratio() - 0.6) <= 0.05
    h = ds.synthetic("wikikg2", seed=0, device="cuda")
    assert torch.equal(g.edge_index, h.edge_index)
    assert torch.equal(g.edge_type, h.edge_type)

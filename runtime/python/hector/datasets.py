"""Benchmark-shaped synthetic heterographs and loaders for a user's own graphs.

No network is available, so the paper's datasets (DGL's aifb, mutag, bgs,
am, fb15k-237 and OGB's biokg, mag, wikikg2) cannot be downloaded. Instead
:func:`synthetic` builds graphs with the *shapes* of the Hector paper's
Table 3 (exact node, node-type, edge and relation counts of the public
datasets), typed relations (each relation joins one source node type to one
destination node type), power-law degrees, and a chosen entity compaction
ratio (unique (src, etype) pairs / edges; the paper gives am 0.57 and
fb15k 0.26). The graphs are synthetic: only their sizes and a few
statistics follow the real data, never their contents.

All graphs are returned as :class:`GraphData` (alias :class:`SyntheticGraph`):
plain int64 tensors in PyG layout (``edge_index`` [2, E], ``edge_type`` [E],
``node_type`` [N]) plus counts. :meth:`GraphData.as_graph` turns one into a
:class:`hector.Graph`; it is the only place this module touches the rest of
the package, and it does so lazily.

Loaders for a user's own graph: :func:`load_npz` (and :func:`save_npz`),
:func:`load_tsv` (head, relation, tail triples) and :func:`from_pyg`
(PyG ``HeteroData``; torch_geometric is never imported here).
"""

import dataclasses
import math
import operator
import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple, Union

import torch

__all__ = [
    "DatasetShape",
    "SHAPES",
    "GraphData",
    "SyntheticGraph",
    "names",
    "shape",
    "scaled_counts",
    "synthetic",
    "load_npz",
    "save_npz",
    "load_tsv",
    "from_pyg",
]

Device = Union[str, torch.device]


# --------------------------------------------------------------------------
# The table of shapes
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetShape:
    """The shape of one benchmark dataset.

    ``compaction`` is the target entity compaction ratio (unique (src, etype)
    pairs / edges); ``compaction_source`` says where it comes from ("paper":
    the Hector paper, Section 4.3; "estimate": derived from the real
    dataset's structure; "chosen": a plausible value picked for this
    synthetic stand-in). ``ntype_sizes`` and ``relations`` ((src type,
    dst type, edges) per relation) pin the real per-type structure where it
    is public and small enough to write down; otherwise both are drawn from
    the seed.
    """

    name: str
    num_nodes: int
    num_ntypes: int
    num_edges: int
    num_etypes: int
    compaction: float
    compaction_source: str
    origin: str
    ntype_sizes: Optional[Tuple[int, ...]] = None
    ntype_names: Optional[Tuple[str, ...]] = None
    relations: Optional[Tuple[Tuple[int, int, int], ...]] = None
    etype_names: Optional[Tuple[str, ...]] = None


# Exact counts of the public datasets behind the paper's Table 3 (which
# prints them rounded: 7.3K (7), 49K (104), ...). fb15k is FB15k-237 with
# reverse edges (310,116 triples x 2 = 620,232 edges, 237 x 2 = 474
# relations), whose entity count is 14,541 (the original FB15k has 14,951
# entities but 1,345 relations and 592,213 triples). biokg and wikikg2 count
# the OGB training edges. mag is ogbn-mag with its real node-type sizes and
# its four relations.
SHAPES: Dict[str, DatasetShape] = {
    s.name: s
    for s in (
        DatasetShape("aifb", 7_262, 7, 48_810, 104, 0.45, "chosen",
                     "DGL AIFBDataset"),
        DatasetShape("mutag", 27_163, 5, 148_100, 50, 0.50, "chosen",
                     "DGL MUTAGDataset"),
        DatasetShape("bgs", 94_806, 27, 672_884, 122, 0.50, "chosen",
                     "DGL BGSDataset"),
        DatasetShape("fb15k", 14_541, 1, 620_232, 474, 0.26, "paper",
                     "DGL FB15k237Dataset (with reverse edges)"),
        DatasetShape("biokg", 93_773, 5, 4_762_678, 51, 0.20, "chosen",
                     "OGB ogbl-biokg (training edges)",
                     ntype_sizes=(10_687, 10_533, 45_085, 17_499, 9_969),
                     ntype_names=("disease", "drug", "function", "protein",
                                  "sideeffect")),
        DatasetShape("am", 1_885_136, 7, 5_668_682, 108, 0.57, "paper",
                     "DGL AMDataset (as in the Hector paper's Table 3)"),
        DatasetShape("mag", 1_939_743, 4, 21_111_007, 4, 0.16, "estimate",
                     "OGB ogbn-mag",
                     ntype_sizes=(736_389, 1_134_649, 8_740, 59_965),
                     ntype_names=("paper", "author", "institution",
                                  "field_of_study"),
                     relations=((1, 2, 1_043_998), (1, 0, 7_145_660),
                                (0, 0, 5_416_271), (0, 3, 7_505_078)),
                     etype_names=("affiliated_with", "writes", "cites",
                                  "has_topic")),
        DatasetShape("wikikg2", 2_500_604, 1, 16_109_182, 535, 0.60,
                     "chosen", "OGB ogbl-wikikg2 (training edges)"),
    )
}

_ALIASES = {
    "fb15k-237": "fb15k", "fb15k237": "fb15k", "ogbl-biokg": "biokg",
    "ogbn-mag": "mag", "ogbl-wikikg2": "wikikg2",
}

# Power-law exponents: relation sizes ~ rank^-1 (Zipf), extra edges of a
# relation over its (src, etype) pairs ~ (k+1)^-1, destination popularity
# within the destination type ~ (k+1)^-1.
_REL_EXPONENT = 1.0
_PAIR_EXPONENT = 1.0
_DST_EXPONENT = 1.0


def names() -> List[str]:
    """The dataset names :func:`synthetic` accepts, in the paper's order."""
    return list(SHAPES)


def shape(name: str) -> DatasetShape:
    """The :class:`DatasetShape` of ``name`` (case-insensitive; OGB-style
    aliases such as ``ogbn-mag`` are accepted)."""
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a str, got {type(name).__name__}")
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in SHAPES:
        raise ValueError(
            f"unknown dataset {name!r}; known: {', '.join(SHAPES)}")
    return SHAPES[key]


def scaled_counts(name: str, scale: float = 1.0) -> Tuple[int, int]:
    """(num_nodes, num_edges) of ``synthetic(name, scale=scale)``:
    ``max(num_ntypes, round(N * scale))`` and ``max(1, round(E * scale))``.
    Node types and relations are kept at every scale (a relation may then
    have no edge)."""
    s = shape(name)
    scale = _check_scale(scale)
    if scale == 1.0:
        return s.num_nodes, s.num_edges
    return (max(s.num_ntypes, int(round(s.num_nodes * scale))),
            max(1, int(round(s.num_edges * scale))))


# --------------------------------------------------------------------------
# Graph container
# --------------------------------------------------------------------------


@dataclass
class GraphData:
    """A typed multigraph as plain tensors (PyG layout).

    Edge ``e`` goes from ``edge_index[0, e]`` to ``edge_index[1, e]`` and has
    relation ``edge_type[e]``; node ``v`` has type ``node_type[v]``. All
    tensors are int64 on one device. Multi-edges are allowed; relations and
    node types may be empty.
    """

    edge_index: torch.Tensor  # [2, E] int64
    edge_type: torch.Tensor   # [E] int64
    node_type: torch.Tensor   # [N] int64
    num_nodes: int
    num_etypes: int
    num_ntypes: int
    name: str = "graph"

    @property
    def num_edges(self) -> int:
        return int(self.edge_type.numel())

    @property
    def device(self) -> torch.device:
        return self.edge_type.device

    def compaction_ratio(self) -> float:
        """Entity compaction ratio: unique (src, etype) pairs / edges
        (0.0 for a graph without edges)."""
        e = self.num_edges
        if e == 0:
            return 0.0
        key = self.edge_index[0] * max(self.num_etypes, 1) + self.edge_type
        return float(torch.unique(key).numel()) / e

    def num_pairs(self) -> int:
        """Number of unique (src, etype) pairs."""
        if self.num_edges == 0:
            return 0
        key = self.edge_index[0] * max(self.num_etypes, 1) + self.edge_type
        return int(torch.unique(key).numel())

    def in_degree(self) -> torch.Tensor:
        return torch.bincount(self.edge_index[1], minlength=self.num_nodes)

    def out_degree(self) -> torch.Tensor:
        return torch.bincount(self.edge_index[0], minlength=self.num_nodes)

    def to(self, device: Device) -> "GraphData":
        return dataclasses.replace(
            self, edge_index=self.edge_index.to(device),
            edge_type=self.edge_type.to(device),
            node_type=self.node_type.to(device))

    def validate(self) -> "GraphData":
        """Check shapes, dtypes, devices and id ranges; raise ValueError
        naming the problem. Returns self."""
        _validate(self.edge_index, self.edge_type, self.node_type,
                  self.num_nodes, self.num_etypes, self.num_ntypes,
                  what=self.name)
        return self

    def as_graph(self):
        """This graph as a :class:`hector.Graph` (imported lazily)."""
        import inspect

        from .graph import Graph  # lazy: keeps this module standalone

        try:
            params = inspect.signature(Graph).parameters
        except (TypeError, ValueError):
            params = {}
        kwargs = {}
        if "num_etypes" in params:
            kwargs["num_etypes"] = self.num_etypes
        if "num_ntypes" in params:
            kwargs["num_ntypes"] = self.num_ntypes
        return Graph(self.edge_index, self.edge_type, self.node_type,
                     self.num_nodes, **kwargs)

    def __repr__(self) -> str:
        return (f"GraphData(name={self.name!r}, num_nodes={self.num_nodes}, "
                f"num_edges={self.num_edges}, num_ntypes={self.num_ntypes}, "
                f"num_etypes={self.num_etypes}, device={self.device})")


SyntheticGraph = GraphData


def _validate(edge_index, edge_type, node_type, num_nodes, num_etypes,
              num_ntypes, what="graph"):
    for nm, t in (("edge_index", edge_index), ("edge_type", edge_type),
                  ("node_type", node_type)):
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{what}: {nm} must be a torch.Tensor")
        if t.dtype != torch.int64:
            raise ValueError(f"{what}: {nm} must be int64, got {t.dtype}")
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"{what}: edge_index must have shape [2, E], got "
                         f"{list(edge_index.shape)}")
    e = edge_index.size(1)
    if edge_type.dim() != 1 or edge_type.numel() != e:
        raise ValueError(f"{what}: edge_type must have shape [{e}], got "
                         f"{list(edge_type.shape)}")
    if node_type.dim() != 1 or node_type.numel() != num_nodes:
        raise ValueError(f"{what}: node_type must have shape [{num_nodes}], "
                         f"got {list(node_type.shape)}")
    if not (edge_index.device == edge_type.device == node_type.device):
        raise ValueError(f"{what}: edge_index, edge_type and node_type must "
                         f"be on one device")
    if e:
        lo, hi = int(edge_index.min()), int(edge_index.max())
        if lo < 0 or hi >= num_nodes:
            raise ValueError(f"{what}: edge_index has node ids in [{lo}, {hi}]"
                             f", outside [0, {num_nodes})")
        lo, hi = int(edge_type.min()), int(edge_type.max())
        if lo < 0 or hi >= num_etypes:
            raise ValueError(f"{what}: edge_type has ids in [{lo}, {hi}], "
                             f"outside [0, {num_etypes})")
    if num_nodes:
        lo, hi = int(node_type.min()), int(node_type.max())
        if lo < 0 or hi >= num_ntypes:
            raise ValueError(f"{what}: node_type has ids in [{lo}, {hi}], "
                             f"outside [0, {num_ntypes})")


# --------------------------------------------------------------------------
# Synthetic generator
# --------------------------------------------------------------------------


def _check_scale(scale) -> float:
    try:
        scale = float(scale)
    except (TypeError, ValueError):
        raise TypeError(f"scale must be a float, got {scale!r}") from None
    if not (scale > 0.0) or math.isinf(scale):
        raise ValueError(f"scale must be a positive finite float, got {scale}")
    return scale


def _apportion(weights: torch.Tensor, total: int, minimum: int) -> torch.Tensor:
    """Split ``total`` into len(weights) int64 parts proportional to
    ``weights`` (float64, CPU) by the largest-remainder rule (ties to the
    lower index; exact when the weights are integers summing to ``total``),
    then raise parts below ``minimum`` to it, taking one from the largest
    parts (only when ``total >= minimum * len(weights)``)."""
    n = weights.numel()
    q = weights / weights.sum() * total
    out = torch.floor(q).to(torch.int64)
    left = total - int(out.sum())
    if left:
        order = torch.sort(-(q - torch.floor(q)), stable=True).indices
        if left > 0:
            out[order[:left]] += 1
        else:  # float round-off only
            out[order[left:]] -= 1
    if minimum > 0 and total >= minimum * n:
        out = torch.clamp(out, min=minimum)
        excess = int(out.sum()) - total
        while excess > 0:  # at most a few rounds
            order = torch.sort(-out, stable=True).indices
            donors = order[out[order] > minimum][:excess]
            out[donors] -= 1
            excess -= int(donors.numel())
    return out


def _pairs_per_relation(m: torch.Tensor, cap: torch.Tensor,
                        ratio: float) -> torch.Tensor:
    """Unique (src, etype) pairs per relation: U_r in
    [min(1, m_r), min(m_r, cap_r)] with sum U as close as possible to
    ratio * sum m (exact when feasible). One scale c (U_r ~ c * m_r) is
    found by bisection; relations whose source type is too small saturate
    and the others take up the slack."""
    lo = torch.clamp(m, max=1)
    hi = torch.minimum(m, cap)
    target = int(round(ratio * int(m.sum())))
    target = max(int(lo.sum()), min(int(hi.sum()), target))
    mf = m.to(torch.float64)

    def fill(c: float) -> torch.Tensor:
        return torch.maximum(torch.floor(c * mf).to(torch.int64), lo) \
            .minimum(hi)

    a, b = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (a + b)
        if int(fill(mid).sum()) <= target:
            a = mid
        else:
            b = mid
    u = fill(a)
    left = target - int(u.sum())
    while left > 0:  # hand the rest to relations with slack, largest
        # fractional part first (at most a few rounds: left <= R normally)
        slack = hi - u
        frac = torch.where(slack > 0, a * mf - u.to(torch.float64),
                           torch.full_like(mf, -math.inf))
        order = torch.sort(-frac, stable=True).indices
        give = order[slack[order] > 0][:left]
        if give.numel() == 0:
            break
        u[give] += 1
        left -= int(give.numel())
    return u


def _powerlaw_index(u: torch.Tensor, n: torch.Tensor, a: float) -> torch.Tensor:
    """Integers k in [0, n) with P(k) ~ (k + 1)^-a (continuous inverse CDF,
    floored), from uniforms ``u`` in [0, 1) (float, overwritten). ``n`` is
    int64 per element, > 0."""
    nf = n.to(u.dtype)
    if abs(a - 1.0) < 1e-9:
        u.mul_(nf.log1p_()).exp_()
    else:
        e = 1.0 - a
        u.mul_(nf.add_(1.0).pow_(e).sub_(1.0)).add_(1.0).pow_(1.0 / e)
    del nf
    k = u.sub_(1.0).clamp_(min=0.0).to(torch.int64)
    return torch.minimum(k, n - 1, out=k)


def synthetic(name: str, seed: int = 0, device: Device = "cpu",
              scale: float = 1.0) -> GraphData:
    """A synthetic heterograph with the shape of dataset ``name``.

    The shapes follow the Hector paper's Table 3 (see :data:`SHAPES`; exact
    counts of the public datasets); the graphs themselves are synthetic.

    - Nodes are numbered in contiguous blocks by node type; block sizes are
      skewed (Zipf over types, or the real sizes where :data:`SHAPES` pins
      them) and every type is non-empty.
    - Each relation joins one source node type to one destination node type
      (drawn with probability ~ type size, every type used as a destination
      and, when there are enough relations, as a source).
    - Relation sizes are Zipf over the relations (every relation gets an
      edge when there are at least as many edges as relations).
    - Within relation r, the edges are spread over exactly U_r distinct
      source nodes (U_r chosen so that unique (src, etype) pairs / edges
      equals ``shape(name).compaction`` whenever the type sizes allow it, at
      every scale): each source gets one edge and the remaining edges go to
      the sources with Zipf popularity; destinations are drawn with Zipf
      popularity within the destination type. Hubs differ per relation
      (random shift), and node ids are randomly permuted within each type.
      Degrees are therefore heavy-tailed (power-law).
    - Edges come in random order; multi-edges are allowed.

    Everything per edge is vectorized torch on ``device``; per-relation
    bookkeeping (at most a few hundred values) runs on the CPU. The result
    is deterministic per (seed, device, scale).

    ``scale`` shrinks (or grows) the node and edge counts proportionally
    (see :func:`scaled_counts`), keeping node types and relations.
    """
    s = shape(name)
    scale = _check_scale(scale)
    try:
        seed = operator.index(seed)
    except TypeError:
        raise TypeError(f"seed must be an int, got {type(seed).__name__}") \
            from None
    device = torch.device(device)
    n_total, e_total = scaled_counts(s.name, scale)
    T, R = s.num_ntypes, s.num_etypes

    gcpu = torch.Generator()
    gcpu.manual_seed(seed)

    # ---- node types: contiguous blocks ---------------------------------
    if s.ntype_sizes is not None:
        tw = torch.tensor(s.ntype_sizes, dtype=torch.float64)
    else:
        tw = torch.arange(1, T + 1, dtype=torch.float64).pow(-1.0)
        tw = tw[torch.randperm(T, generator=gcpu)]
    tsize = _apportion(tw, n_total, 1)
    toff = torch.cumsum(tsize, 0) - tsize

    # ---- relations: (src type, dst type, size) --------------------------
    if s.relations is not None:
        rel = torch.tensor(s.relations, dtype=torch.int64)
        src_t, dst_t = rel[:, 0].clone(), rel[:, 1].clone()
        rw = rel[:, 2].to(torch.float64)
    else:
        rw = torch.arange(1, R + 1, dtype=torch.float64).pow(-_REL_EXPONENT)
        rw = rw[torch.randperm(R, generator=gcpu)]
        p = tw / tw.sum()
        src_s = torch.multinomial(p, R, replacement=True, generator=gcpu)
        dst_t = torch.multinomial(p, R, replacement=True, generator=gcpu)
        # Larger relations get the larger of the drawn source types, so that
        # their U_r distinct sources fit in the type.
        src_s = src_s[torch.sort(-tw[src_s], stable=True).indices]
        by_size = torch.sort(-rw, stable=True).indices
        src_t = torch.empty_like(src_s)
        src_t[by_size] = src_s
        # Every type is the destination of some relation and, when there
        # are enough relations, the source of one of the smallest ones.
        k = min(R, T)
        dst_t[:k] = torch.arange(k)
        k2 = min(R, 2 * T) - k
        if k2 > 0:
            src_t[by_size[R - k2:]] = torch.arange(k2)
    m = _apportion(rw, e_total, 1)
    n_src, n_dst = tsize[src_t], tsize[dst_t]
    pairs = _pairs_per_relation(m, n_src, s.compaction)
    shift_src = (torch.rand(R, generator=gcpu, dtype=torch.float64)
                 * n_src).to(torch.int64).minimum(n_src - 1)
    shift_dst = (torch.rand(R, generator=gcpu, dtype=torch.float64)
                 * n_dst).to(torch.int64).minimum(n_dst - 1)

    # ---- per-edge work on the device ------------------------------------
    # Edges are first laid out sorted by relation (shuffled at the end);
    # per-relation values are gathered to the edges by relation id. In-place
    # ops keep the number of E-sized temporaries small.
    gdev = torch.Generator(device=device)
    gdev.manual_seed(seed)
    node_type = torch.repeat_interleave(
        torch.arange(T, device=device), tsize.to(device), output_size=n_total)
    # rank -> node id: a random permutation within each type block.
    rank_to_node = torch.randperm(n_total, generator=gdev, device=device)
    if T > 1:
        order = torch.sort(node_type[rank_to_node], stable=True).indices
        rank_to_node = rank_to_node[order]
        del order

    etype = torch.repeat_interleave(torch.arange(R, device=device),
                                    m.to(device), output_size=e_total)

    def per_edge(*cols: torch.Tensor) -> torch.Tensor:
        """[E, len(cols)]: per-relation values gathered to the edges."""
        return torch.stack(cols, 1).to(device)[etype]

    # Source: pair index k in [0, U_r): the first U_r edges of relation r
    # take pairs 0..U_r-1 (so exactly U_r distinct pairs), the rest draw
    # pairs with Zipf popularity; pair k is node rank (k + shift) mod n_src.
    tab = per_edge(torch.cumsum(m, 0) - m, pairs, shift_src, n_src, toff[src_t])
    pos = torch.arange(e_total, device=device).sub_(tab[:, 0])
    u_e = tab[:, 1]
    r = torch.rand(e_total, generator=gdev, device=device)
    k = _powerlaw_index(r, u_e.clamp(min=1), _PAIR_EXPONENT)
    k = torch.where(pos < u_e, pos, k)
    del pos, u_e
    k.add_(tab[:, 2]).remainder_(tab[:, 3]).add_(tab[:, 4])
    del tab
    src = rank_to_node[k]
    # Destination: Zipf popularity over the destination type, shifted.
    tab = per_edge(n_dst, shift_dst, toff[dst_t])
    torch.rand(e_total, generator=gdev, device=device, out=r)
    k = _powerlaw_index(r, tab[:, 0], _DST_EXPONENT)
    del r
    k.add_(tab[:, 1]).remainder_(tab[:, 0]).add_(tab[:, 2])
    del tab
    dst = rank_to_node[k]
    del k, rank_to_node

    # random edge order
    shuffle = torch.randperm(e_total, generator=gdev, device=device)
    edge_index = torch.stack((src[shuffle], dst[shuffle]))
    del src, dst
    etype = etype[shuffle]
    del shuffle
    return GraphData(edge_index=edge_index, edge_type=etype,
                     node_type=node_type, num_nodes=n_total, num_etypes=R,
                     num_ntypes=T, name=s.name)


# --------------------------------------------------------------------------
# Loaders
# --------------------------------------------------------------------------


def _int_array(arr, key: str, path: str):
    import numpy as np

    if arr.dtype.kind not in "iu":
        raise ValueError(f"{path}: '{key}' must hold integers, got dtype "
                         f"{arr.dtype}")
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"{path}: '{key}' has values beyond int64")
    return arr


def _scalar(z, key: str, path: str) -> Optional[int]:
    if key not in z.files:
        return None
    a = z[key]
    if a.shape not in ((), (1,)) or a.dtype.kind not in "iu":
        raise ValueError(f"{path}: '{key}' must be one integer, got dtype "
                         f"{a.dtype} shape {list(a.shape)}")
    v = int(a.reshape(()))
    if v < 0:
        raise ValueError(f"{path}: '{key}' must be >= 0, got {v}")
    return v


def load_npz(path, device: Device = "cpu") -> GraphData:
    """Load a graph from a ``.npz`` file.

    Required keys: ``edge_index`` (integer [2, E]) and ``edge_type``
    (integer [E]). Optional: ``node_type`` (integer [N]; all zeros when
    absent), ``num_nodes``, ``num_etypes``, ``num_ntypes`` (integer scalars;
    otherwise inferred as len(node_type), or max id + 1). Raises ValueError
    naming the missing key or the bad shape, dtype or id range.
    """
    import numpy as np

    p = os.fspath(path)
    try:
        z = np.load(p, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{p}: cannot read as .npz: {exc}") from exc
    if not hasattr(z, "files"):
        raise ValueError(f"{p}: not an .npz archive (a single .npy array?)")
    with z:
        for key in ("edge_index", "edge_type"):
            if key not in z.files:
                raise ValueError(f"{p}: missing key '{key}' (found: "
                                 f"{', '.join(z.files) or 'none'})")
        ei = _int_array(z["edge_index"], "edge_index", p)
        et = _int_array(z["edge_type"], "edge_type", p)
        if ei.ndim != 2 or ei.shape[0] != 2:
            raise ValueError(f"{p}: 'edge_index' must have shape [2, E], got "
                             f"{list(ei.shape)}")
        e = ei.shape[1]
        if et.shape != (e,):
            raise ValueError(f"{p}: 'edge_type' must have shape [{e}] to match"
                             f" edge_index, got {list(et.shape)}")
        nt = None
        if "node_type" in z.files:
            nt = _int_array(z["node_type"], "node_type", p)
            if nt.ndim != 1:
                raise ValueError(f"{p}: 'node_type' must have shape [N], got "
                                 f"{list(nt.shape)}")
        num_nodes = _scalar(z, "num_nodes", p)
        num_etypes = _scalar(z, "num_etypes", p)
        num_ntypes = _scalar(z, "num_ntypes", p)

    if nt is not None:
        if num_nodes is not None and num_nodes != nt.shape[0]:
            raise ValueError(f"{p}: 'num_nodes' is {num_nodes} but "
                             f"'node_type' has {nt.shape[0]} entries")
        num_nodes = int(nt.shape[0])
    elif num_nodes is None:
        num_nodes = int(ei.max()) + 1 if e else 0
    if e:
        lo, hi = int(ei.min()), int(ei.max())
        if lo < 0 or hi >= num_nodes:
            raise ValueError(f"{p}: 'edge_index' has node ids in [{lo}, {hi}],"
                             f" outside [0, {num_nodes})")
        lo, hi = int(et.min()), int(et.max())
        if lo < 0:
            raise ValueError(f"{p}: 'edge_type' has negative ids (min {lo})")
        if num_etypes is None:
            num_etypes = hi + 1
        elif hi >= num_etypes:
            raise ValueError(f"{p}: 'edge_type' has ids up to {hi}, but "
                             f"'num_etypes' is {num_etypes}")
    elif num_etypes is None:
        num_etypes = 0
    if nt is None:
        nt = np.zeros(num_nodes, dtype=np.int64)
    if num_nodes:
        lo, hi = int(nt.min()), int(nt.max())
        if lo < 0:
            raise ValueError(f"{p}: 'node_type' has negative ids (min {lo})")
        if num_ntypes is None:
            num_ntypes = hi + 1
        elif hi >= num_ntypes:
            raise ValueError(f"{p}: 'node_type' has ids up to {hi}, but "
                             f"'num_ntypes' is {num_ntypes}")
    elif num_ntypes is None:
        num_ntypes = 0

    def t(a):
        return torch.from_numpy(np.ascontiguousarray(a, dtype=np.int64)).to(device)

    name = os.path.splitext(os.path.basename(p))[0]
    return GraphData(edge_index=t(ei), edge_type=t(et), node_type=t(nt),
                     num_nodes=num_nodes, num_etypes=num_etypes,
                     num_ntypes=num_ntypes, name=name)


def save_npz(graph: GraphData, path) -> None:
    """Write ``graph`` in the format :func:`load_npz` reads (with the
    counts, so empty trailing relations and types survive)."""
    import numpy as np

    np.savez(os.fspath(path),
             edge_index=graph.edge_index.cpu().numpy(),
             edge_type=graph.edge_type.cpu().numpy(),
             node_type=graph.node_type.cpu().numpy(),
             num_nodes=np.int64(graph.num_nodes),
             num_etypes=np.int64(graph.num_etypes),
             num_ntypes=np.int64(graph.num_ntypes))


def load_tsv(path, device: Device = "cpu"
             ) -> Tuple[GraphData, Dict[str, int], Dict[str, int]]:
    """Load ``head<TAB>relation<TAB>tail`` triples.

    Every token is a label (integer-looking ones too): entities (heads and
    tails, one id space) and relations are numbered contiguously in order of
    first appearance (head before tail on each line). Blank lines and lines
    starting with ``#`` are skipped; surrounding whitespace of a field is
    ignored. All nodes get node type 0. Returns ``(graph, entity_to_id,
    relation_to_id)``. A malformed line raises ValueError with ``path:line``.
    """
    p = os.fspath(path)
    ent: Dict[str, int] = {}
    rel: Dict[str, int] = {}
    src: List[int] = []
    dst: List[int] = []
    typ: List[int] = []
    with open(p, "r", encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            parts = [x.strip() for x in line.split("\t")]
            if len(parts) != 3:
                raise ValueError(
                    f"{p}:{lineno}: expected 3 tab-separated fields "
                    f"(head, relation, tail), got {len(parts)}: {line!r}")
            if not all(parts):
                raise ValueError(f"{p}:{lineno}: empty field in {line!r}")
            h, r, t = parts
            src.append(ent.setdefault(h, len(ent)))
            typ.append(rel.setdefault(r, len(rel)))
            dst.append(ent.setdefault(t, len(ent)))
    if not src:
        raise ValueError(f"{p}: no triples found")
    edge_index = torch.tensor([src, dst], dtype=torch.int64, device=device)
    edge_type = torch.tensor(typ, dtype=torch.int64, device=device)
    node_type = torch.zeros(len(ent), dtype=torch.int64, device=device)
    name = os.path.splitext(os.path.basename(p))[0]
    g = GraphData(edge_index=edge_index, edge_type=edge_type,
                  node_type=node_type, num_nodes=len(ent),
                  num_etypes=len(rel), num_ntypes=1, name=name)
    return g, ent, rel


def from_pyg(data, device: Optional[Device] = None
             ) -> Tuple[GraphData, List[str], List[Tuple[str, str, str]],
                        List[int]]:
    """Flatten a PyG ``HeteroData`` into one typed graph.

    Node ids are offset per node type in ``data.node_types`` order (node
    type id = position in that list); edge type id = position in
    ``data.edge_types``. Every node type needs a known ``num_nodes`` and
    every edge type an ``edge_index``. Returns ``(graph, node_types,
    edge_types, node_offsets)`` with ``node_offsets`` of length
    ``len(node_types) + 1`` (global id = local id + node_offsets[type]).
    ``device`` defaults to the device of the edge indices (CPU if none).
    torch_geometric is not imported.
    """
    if not (hasattr(data, "node_types") and hasattr(data, "edge_types")):
        raise TypeError("from_pyg expects a torch_geometric HeteroData, got "
                        f"{type(data).__name__}")
    node_types = list(data.node_types)
    edge_types = [tuple(et) for et in data.edge_types]
    index = {nt: i for i, nt in enumerate(node_types)}
    sizes = []
    for nt in node_types:
        n = data[nt].num_nodes
        if n is None:
            raise ValueError(f"from_pyg: node type {nt!r} has no num_nodes "
                             "(set data[{nt!r}].num_nodes or x)")
        sizes.append(int(n))
    offsets = [0]
    for n in sizes:
        offsets.append(offsets[-1] + n)
    if device is None:
        device = torch.device("cpu")
        for et in edge_types:
            ei = getattr(data[et], "edge_index", None)
            if isinstance(ei, torch.Tensor):
                device = ei.device
                break
    device = torch.device(device)
    srcs, dsts, typs = [], [], []
    for i, et in enumerate(edge_types):
        if len(et) != 3:
            raise ValueError(f"from_pyg: edge type {et!r} is not a (src, rel, "
                             "dst) triple")
        s, _, d = et
        for nt in (s, d):
            if nt not in index:
                raise ValueError(f"from_pyg: edge type {et!r} names unknown "
                                 f"node type {nt!r}")
        store = data[et]
        ei = store.edge_index if "edge_index" in store else None
        if not isinstance(ei, torch.Tensor):
            raise ValueError(f"from_pyg: edge type {et!r} has no edge_index "
                             "tensor (SparseTensor adj_t is not supported)")
        if ei.dim() != 2 or ei.size(0) != 2:
            raise ValueError(f"from_pyg: edge_index of {et!r} must have shape "
                             f"[2, E], got {list(ei.shape)}")
        if ei.dtype.is_floating_point or ei.dtype == torch.bool \
                or ei.dtype.is_complex:
            raise ValueError(f"from_pyg: edge_index of {et!r} must hold "
                             f"integers, got {ei.dtype}")
        ei = ei.to(device=device, dtype=torch.int64)
        if ei.numel():
            ns, nd = sizes[index[s]], sizes[index[d]]
            for row, n, side in ((ei[0], ns, "source"), (ei[1], nd, "destination")):
                lo, hi = int(row.min()), int(row.max())
                if lo < 0 or hi >= n:
                    raise ValueError(
                        f"from_pyg: {side} ids of {et!r} are in [{lo}, {hi}], "
                        f"outside [0, {n})")
        srcs.append(ei[0] + offsets[index[s]])
        dsts.append(ei[1] + offsets[index[d]])
        typs.append(torch.full((ei.size(1),), i, dtype=torch.int64,
                               device=device))
    if srcs:
        edge_index = torch.stack((torch.cat(srcs), torch.cat(dsts)))
        edge_type = torch.cat(typs)
    else:
        edge_index = torch.empty(2, 0, dtype=torch.int64, device=device)
        edge_type = torch.empty(0, dtype=torch.int64, device=device)
    node_type = torch.repeat_interleave(
        torch.arange(len(sizes), device=device),
        torch.tensor(sizes, dtype=torch.int64, device=device))
    g = GraphData(edge_index=edge_index, edge_type=edge_type,
                  node_type=node_type, num_nodes=offsets[-1],
                  num_etypes=len(edge_types), num_ntypes=len(node_types),
                  name="pyg")
    return g, node_types, edge_types, offsets

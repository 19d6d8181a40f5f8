"""The graph container: a typed multigraph in PyG layout."""

import operator

import torch

from ._ext import extension

__all__ = ["Graph", "graph_array_names"]


def graph_array_names() -> list:
    """The names of :meth:`Graph.kernel_arrays`, in order: ``src``, ``dst``,
    ..., ``type_iota`` (the fields of ``runtime/GraphArrays.h``)."""
    return list(extension().graph_array_names())


def _shape(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _check_index_tensor(t, name):
    """TypeError unless `t` is a tensor of an integer dtype."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got "
                        f"{type(t).__name__}")
    if t.dtype == torch.bool or t.is_floating_point() or t.is_complex():
        raise TypeError(f"{name}: expected an integer tensor (e.g. "
                        f"torch.int64), got {t.dtype}")


def _check_count(value, name):
    """Returns `value` as a non-negative int; None stays None."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected an int, got bool")
    if isinstance(value, torch.Tensor) and value.dim() == 0 and \
            not value.is_floating_point():
        value = int(value)
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: expected an int, got "
                        f"{type(value).__name__}") from None
    if value < 0:
        raise ValueError(f"{name}: must be non-negative, got {value}")
    return value


def _check_range(t, name, bound, bound_name):
    """ValueError unless every element of `t` is in [0, bound)."""
    if t.numel() == 0:
        return
    lo, hi = int(t.min()), int(t.max())
    if lo < 0:
        raise ValueError(f"{name}: ids must be non-negative, found {lo}")
    if hi >= bound:
        raise ValueError(f"{name}: id {hi} is out of range for "
                         f"{bound_name}={bound}")


def _owned_int64(t):
    """A contiguous int64 copy of `t` that shares no memory with it."""
    return t.to(dtype=torch.int64, memory_format=torch.contiguous_format,
                copy=True)


class Graph:
    """A typed multigraph: edge ``e`` goes from ``edge_index[0, e]`` to
    ``edge_index[1, e]`` and has relation ``edge_type[e]``; node ``v`` has
    node type ``node_type[v]``.

    Args:
        edge_index: integer tensor ``[2, E]`` (PyG layout: sources, then
            destinations).
        edge_type: integer tensor ``[E]``, relation ids in
            ``[0, num_etypes)``.
        node_type: optional integer tensor ``[N]``, node type ids in
            ``[0, num_ntypes)``; all nodes have type 0 when omitted.
        num_nodes: optional; defaults to ``len(node_type)`` or else the
            largest node id + 1 (0 for a graph without edges).
        num_etypes: optional; defaults to the largest edge type + 1.
        num_ntypes: optional; defaults to the largest node type + 1 (1
            without node_type).

    All tensors must be on one device; the graph lives there. Every
    violation raises TypeError (wrong type or dtype) or ValueError (shape,
    range, device) naming the argument.
    """

    def __init__(self, edge_index, edge_type, node_type=None, num_nodes=None,
                 *, num_etypes=None, num_ntypes=None):
        _check_index_tensor(edge_index, "edge_index")
        if edge_index.dim() != 2 or edge_index.size(0) != 2:
            raise ValueError("edge_index: expected shape [2, E], got "
                             f"{_shape(edge_index)}")
        device = edge_index.device
        num_edges = edge_index.size(1)

        _check_index_tensor(edge_type, "edge_type")
        if edge_type.dim() != 1 or edge_type.size(0) != num_edges:
            raise ValueError(f"edge_type: expected shape [{num_edges}] (one "
                             f"per edge of edge_index), got "
                             f"{_shape(edge_type)}")
        if edge_type.device != device:
            raise ValueError(f"edge_type: on {edge_type.device} but "
                             f"edge_index is on {device}")

        if node_type is not None:
            _check_index_tensor(node_type, "node_type")
            if node_type.dim() != 1:
                raise ValueError("node_type: expected shape [N] (one per "
                                 f"node), got {_shape(node_type)}")
            if node_type.device != device:
                raise ValueError(f"node_type: on {node_type.device} but "
                                 f"edge_index is on {device}")

        num_nodes = _check_count(num_nodes, "num_nodes")
        if node_type is not None:
            if num_nodes is None:
                num_nodes = node_type.size(0)
            elif num_nodes != node_type.size(0):
                raise ValueError(f"num_nodes: {num_nodes} but node_type has "
                                 f"{node_type.size(0)} entries")
        elif num_nodes is None:
            if num_edges > 0 and int(edge_index.min()) < 0:
                raise ValueError("edge_index: node ids must be "
                                 f"non-negative, found "
                                 f"{int(edge_index.min())}")
            num_nodes = int(edge_index.max()) + 1 if num_edges > 0 else 0
        _check_range(edge_index, "edge_index", num_nodes, "num_nodes")

        num_etypes = _check_count(num_etypes, "num_etypes")
        if num_etypes is None:
            num_etypes = int(edge_type.max()) + 1 if num_edges > 0 else 0
        _check_range(edge_type, "edge_type", num_etypes, "num_etypes")

        num_ntypes = _check_count(num_ntypes, "num_ntypes")
        if node_type is None:
            if num_ntypes is None:
                num_ntypes = 1
            elif num_ntypes < 1 and num_nodes > 0:
                raise ValueError(f"num_ntypes: {num_ntypes}, but without "
                                 "node_type every node has type 0")
            node_type = torch.zeros(num_nodes, dtype=torch.int64,
                                    device=device)
        elif num_ntypes is None:
            num_ntypes = int(node_type.max()) + 1 if num_nodes > 0 else 0
        _check_range(node_type, "node_type", num_ntypes, "num_ntypes")

        # Copies, never views: an in-place change of the caller's tensors
        # after this point would bypass the checks above (and the kernels
        # would mix it with the derived arrays cached by cpp()).
        self._src = _owned_int64(edge_index[0])
        self._dst = _owned_int64(edge_index[1])
        self._edge_type = _owned_int64(edge_type)
        self._node_type = _owned_int64(node_type)
        self._num_nodes = num_nodes
        self._num_etypes = num_etypes
        self._num_ntypes = num_ntypes
        self._cpp = None

    @property
    def src(self):
        """[E] int64 source node of each edge."""
        return self._src

    @property
    def dst(self):
        """[E] int64 destination node of each edge."""
        return self._dst

    @property
    def edge_index(self):
        """[2, E] int64 (sources, destinations)."""
        return torch.stack([self._src, self._dst])

    @property
    def edge_type(self):
        """[E] int64 relation of each edge."""
        return self._edge_type

    @property
    def node_type(self):
        """[N] int64 node type of each node."""
        return self._node_type

    @property
    def num_nodes(self):
        return self._num_nodes

    @property
    def num_edges(self):
        return self._src.size(0)

    @property
    def num_etypes(self):
        return self._num_etypes

    @property
    def num_ntypes(self):
        return self._num_ntypes

    @property
    def device(self):
        return self._src.device

    def to(self, device):
        """The same graph on another device."""
        return Graph(self.edge_index.to(device), self._edge_type.to(device),
                     self._node_type.to(device), self._num_nodes,
                     num_etypes=self._num_etypes,
                     num_ntypes=self._num_ntypes)

    def cpp(self):
        """The C++ graph (hector._C.Graph), built on first use; it caches
        the derived arrays (degrees, unique pairs, CSR)."""
        if self._cpp is None:
            self._cpp = extension().Graph(
                self._src, self._dst, self._edge_type, self._node_type,
                self._num_nodes, self._num_etypes, self._num_ntypes)
        return self._cpp

    def kernel_arrays(self, edge_order: str = "given") -> list:
        """Every array the generated kernels read, as a list of 1-d
        contiguous tensors on the graph's device, in the order of
        :func:`graph_array_names` (computed once per `edge_order` and cached
        by the C++ graph).

        `edge_order` numbers the edges: ``"given"``, edge ``e`` is the
        graph's edge ``e``; ``"dst"``, the edges sorted by destination, then
        edge type, ties in the given order (every per-edge array below is
        then the given one permuted; node, type and pair arrays are the
        same). A layer without per-edge inputs or outputs runs on the
        ``"dst"`` numbering: its per-edge temporaries are then written and
        read in the order the kernels' loops over a node's incoming edges
        visit them. Any other value raises ValueError.

        With N nodes, E edges, R edge types, T node types and P unique
        (src, edge type) pairs:

        * ``src``, ``dst``, ``etype`` [E], ``ntype`` [N]: the graph as given;
        * ``in_degree``, ``out_degree`` [N], ``rel_in_degree`` [E]: float32
          degrees (``rel_in_degree[e]``: edges into ``dst[e]`` of type
          ``etype[e]``);
        * ``etype_sorted_eid`` [E] (edge ids stably sorted by type) and
          ``etype_ptr`` [R+1] (its segments);
        * ``dst_ptr`` [N+1], ``dst_eid`` [E]: CSR by destination;
          ``src_ptr`` [N+1], ``src_eid`` [E]: by source; ascending edge id
          within a node;
        * ``pair_src``, ``pair_etype`` [P]: the unique pairs, numbered in
          ascending (edge type, src) order; ``pair_ptr`` [R+1]: the pairs of
          type r are ``pair_ptr[r]:pair_ptr[r+1]``; ``edge_pair`` [E]: the
          pair of each edge; ``pair_src_order`` [P]: the pair ids in
          ascending (src, edge type) order (the order in which the
          attention scores' dot kernel visits the pairs, reading each
          source's row once), and ``pair_src_order_src`` and
          ``pair_src_order_etype`` [P] their sources and edge types in
          that order;
        * ``ntype_sorted_nodes`` [N] (node ids stably sorted by type) and
          ``ntype_ptr`` [T+1]. When the nodes are numbered by type (a
          heterograph flattened one type after another),
          ``ntype_sorted_nodes`` is 0, 1, 2, ... and the start of
          ``type_iota``'s storage: the kernels see that and run the GEMMs
          over the nodes by type on rows in place;
        * ``edge_src_ntype``, ``edge_dst_ntype`` [E], ``pair_src_ntype`` [P]:
          node types of the endpoints;
        * ``type_iota`` [max(R, T)+1]: 0, 1, 2, ... In the ``"dst"``
          numbering ``dst_eid`` is 0, 1, 2, ... too, and the two are the
          start of one tensor's storage: the kernels see that and take an
          incoming edge's id from its CSR position instead of loading it.
        * ``heavy_dst_rows``, ``heavy_src_rows``: the nodes with more than
          128 incoming / outgoing edges, largest degree first (ties by
          ascending id);
          ``heavy_dst_edge_ptr``, ``heavy_src_edge_ptr`` [number of heavy
          rows + 1]: 0 and the running sum of those rows' degrees (the GPU
          kernels share the heavy rows' edges out over their blocks);
        * ``dst_csr_src``, ``dst_csr_etype``, ``dst_csr_pair`` [E]: each
          edge's src, type and pair in ``dst_eid`` order, and
          ``src_csr_dst``, ``src_csr_etype``, ``src_csr_pair`` [E] in
          ``src_eid`` order (the kernels' edge loops read them at their CSR
          position). In the ``"dst"`` numbering the ``dst_csr_*`` arrays
          are ``src``, ``etype`` and ``edge_pair`` themselves (the same
          storage), since that order is the edge order there;
        * ``sum_chunk_ptr`` [C+1], ``sum_chunk_src`` [E], ``sum_chunk_dst``,
          ``sum_chunk_eid`` [C], ``sum_chunk_etype_ptr`` [R+1]: the
          (destination, edge type) segments in ascending (edge type,
          destination) order, cut into C chunks of at most 64 edges (the
          rows of a summed-rows GEMM): chunk c sums the sources
          ``sum_chunk_src[sum_chunk_ptr[c]:sum_chunk_ptr[c+1]]``, adds into
          ``sum_chunk_dst[c]`` and starts at edge ``sum_chunk_eid[c]``;
          ``sum_chunk_edge`` [E] is the edge of each summed source (the
          entry a weighted sum reads its edge's weight for) and
          ``sum_edge_entry`` [E] its inverse (each edge's entry), and
          ``sum_edge_chunk`` [E] each edge's chunk;
          ``sum_chunk_rel_in_degree`` [C] is ``rel_in_degree`` at each
          chunk's first edge (the divisor a summed RGCN GEMM reads);
          ``sum_chunk_dst_order`` [C] is the chunk ids in ascending
          (destination, edge type) order (as ``pair_src_order``, for a
          GEMM once a chunk that reads the destination's row), and
          ``sum_chunk_dst_order_dst`` and ``sum_chunk_dst_order_etype`` [C]
          their destinations and edge types in that order.

        All are int64 except the four degree arrays.
        """
        return list(self.cpp().kernel_arrays(edge_order))

    def __repr__(self):
        return (f"hector.Graph(num_nodes={self._num_nodes}, "
                f"num_edges={self.num_edges}, "
                f"num_etypes={self._num_etypes}, "
                f"num_ntypes={self._num_ntypes}, device={self.device})")

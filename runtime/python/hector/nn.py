"""Drop-in replacements for torch_geometric's RGCNConv, RGATConv and HGTConv,
run by Hector's generated kernels.

Each layer takes the constructor arguments and ``forward`` signature of its
PyG counterpart, holds the same parameters under the same ``state_dict``
keys and shapes (``layer.load_state_dict(pyg_layer.state_dict())`` works
both ways), initialises them with the same functions, and computes the same
outputs and gradients. The work is done by the bundled PyG-compatible
models (``models/rgcn_pyg.hgnn``, ``rgat_pyg.hgnn``, ``hgt_pyg.hgnn``; their
header comments give the exact mapping) as compiled into
``$HECTOR_BUILD_DIR/lib/libhector_<model>.so``.

What the models do not compute raises, naming the argument:
``NotImplementedError`` for a valid PyG option Hector does not support,
``ValueError`` / ``TypeError`` for bad input. Options that reduce to the
models by a cheap tensor expression are supported (basis and
block-diagonal decompositions, no root weight, no bias, RGAT's
``concat=False``).

The generated kernels are float32 today; inputs and parameters must be
float32, on the CPU or a CUDA device (the graph lives on the device of
``x``). PyG itself need not be installed.
"""

import math
import numbers
import operator

import torch
from torch import Tensor
from torch.nn import Module, ModuleDict, Parameter, ParameterDict

from .graph import Graph

__all__ = ["RGCNConv", "RGATConv", "HGTConv", "hgt_pyg_params"]

# The dtypes the generated kernels are built for.
_KERNEL_DTYPES = (torch.float32, torch.float64)

# MessagePassing keyword arguments that PyG's layers forward to their base
# class, with the values under which the layers compute what the models do.
_MESSAGE_PASSING_DEFAULTS = {"flow": "source_to_target",
                             "decomposed_layers": 1}


# ---------------------------------------------------------------------------
# The generated layer libraries.

_LIBRARIES = {}


def _library(model: str):
    """The generated layer library of a bundled model (loaded once)."""
    if model not in _LIBRARIES:
        from . import models
        _LIBRARIES[model] = models.get(model)
    return _LIBRARIES[model]


def _run_model(model: str, graph, values: dict, **hypers) -> Tensor:
    """The bundled model's output for `values` (every argument, built by
    the layer) through LayerLibrary._run_arguments: run() without its
    checks of a caller's dict, which the layers here do not need, and with
    the hypers checked once per value. On a slow host every microsecond of
    Python a call shows in a small graph's step (docs/perf-notes.md
    section 110)."""
    lib = _library(model)
    return lib._run_arguments(graph, [values[k] for k in lib._arguments],
                              lib._hyper_values(hypers))[0]


# ---------------------------------------------------------------------------
# Initialisers: the formulas of torch_geometric.nn.inits, drawing from the
# global generator in the same order, so that a seeded reset_parameters()
# gives PyG's values.

@torch.no_grad()
def _glorot(t):
    if t is not None:
        bound = math.sqrt(6.0 / (t.size(-2) + t.size(-1)))
        t.uniform_(-bound, bound)


@torch.no_grad()
def _kaiming_uniform(t, fan, a=math.sqrt(5)):
    bound = math.sqrt(6 / ((1 + a ** 2) * fan))
    t.uniform_(-bound, bound)


@torch.no_grad()
def _uniform(t, fan):
    bound = 1.0 / math.sqrt(fan)
    t.uniform_(-bound, bound)


@torch.no_grad()
def _fill(t, value):
    if t is not None:
        t.fill_(value)


# ---------------------------------------------------------------------------
# Argument checks.

def _shape(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _check_kwargs(kwargs, layer):
    """NotImplementedError for MessagePassing options that change what the
    layer computes; TypeError for unknown keywords."""
    for name, value in kwargs.items():
        if name not in _MESSAGE_PASSING_DEFAULTS:
            raise TypeError(f"{layer}: unexpected keyword argument '{name}'")
        if value != _MESSAGE_PASSING_DEFAULTS[name]:
            raise NotImplementedError(
                f"{layer}: {name}={value!r} is not supported (only "
                f"{_MESSAGE_PASSING_DEFAULTS[name]!r})")


def _check_channels(value, name, layer):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{layer}: {name} must be an int, got "
                        f"{type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{layer}: {name} must be positive, got {value}")


def _check_dtype(t, name):
    """TypeError unless `t` has a dtype the generated kernels are built
    for."""
    if t.dtype not in _KERNEL_DTYPES:
        raise TypeError(
            f"{name}: the generated kernels take float32 or float64, got "
            f"{t.dtype}")


def _check_features(x, name, channels):
    """`x` must be a float tensor [N, channels]; returns N."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: expected a float tensor [num_nodes, "
                        f"{channels}], got {type(x).__name__}")
    if not x.is_floating_point():
        raise NotImplementedError(
            f"{name}: node indices (featureless nodes) are not supported; "
            f"pass features as a float tensor [num_nodes, {channels}]")
    if x.dim() != 2 or x.size(1) != channels:
        raise ValueError(f"{name}: expected shape [num_nodes, {channels}], "
                         f"got {_shape(x)}")
    _check_dtype(x, name)
    return x.size(0)


def _check_params(module, device, x_name="x", dtype=None):
    """Every parameter of a kernel dtype, of `dtype` (the input's) and on
    `device` (the input's)."""
    # The usual case in one tight pass (an HGTConv on fb15k has about 500
    # parameters, and this runs on every call); the loop below only names
    # the parameter that is off.
    if dtype in _KERNEL_DTYPES and _params_match(module, dtype, device):
        return
    for pname, p in module.named_parameters():
        _check_dtype(p, pname)
        if dtype is not None and p.dtype != dtype:
            raise TypeError(f"{x_name}: {dtype} but the layer's parameter "
                            f"'{pname}' is {p.dtype} (convert the layer "
                            "or the input)")
        if p.device != device:
            raise ValueError(f"{x_name}: on {device} but the layer's "
                             f"parameter '{pname}' is on {p.device}")


def _params_match(module, dtype, device):
    """Whether every parameter of `module` and of its submodules has
    `dtype` and lives on `device`. The walk of module.parameters() without
    its generators, names and duplicate set: on an H100 host that walk was
    most of an HGTConv call's Python time (aifb's 141 parameters, fb15k's
    481). A parameter shared by two modules is checked twice."""
    pending = [module]
    while pending:
        m = pending.pop()
        for p in m._parameters.values():
            if p is not None and (p.dtype is not dtype
                                  or p.device != device):
                return False
        pending.extend(sub for sub in m._modules.values() if sub is not None)
    return True


def _check_edge_index(edge_index, name, device):
    if not isinstance(edge_index, Tensor):
        raise TypeError(f"{name}: expected a tensor [2, num_edges] (sparse "
                        f"adjacency types are not supported), got "
                        f"{type(edge_index).__name__}")
    if edge_index.dtype != torch.int64:
        raise TypeError(f"{name}: expected dtype torch.int64, got "
                        f"{edge_index.dtype}")
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"{name}: expected shape [2, num_edges], got "
                         f"{_shape(edge_index)}")
    if edge_index.device != device:
        raise ValueError(f"{name}: on {edge_index.device} but x is on "
                         f"{device}")


def _check_ids(t, name, bound, what):
    """ValueError unless every id in `t` is in [0, bound)."""
    if t.numel() == 0:
        return
    lo, hi = int(t.min()), int(t.max())
    if lo < 0:
        raise ValueError(f"{name}: ids must be non-negative, found {lo}")
    if hi >= bound:
        raise ValueError(f"{name}: id {hi} is out of range for {what}")


def _check_edge_type(edge_type, num_edges, device):
    if edge_type is None:
        raise ValueError("edge_type: required (one relation id per edge)")
    if not isinstance(edge_type, Tensor):
        raise TypeError(f"edge_type: expected a tensor [num_edges], got "
                        f"{type(edge_type).__name__}")
    if edge_type.dtype != torch.int64:
        raise TypeError(f"edge_type: expected dtype torch.int64, got "
                        f"{edge_type.dtype}")
    if edge_type.dim() != 1 or edge_type.size(0) != num_edges:
        raise ValueError(f"edge_type: expected shape [{num_edges}] (one per "
                         f"edge of edge_index), got {_shape(edge_type)}")
    if edge_type.device != device:
        raise ValueError(f"edge_type: on {edge_type.device} but x is on "
                         f"{device}")


# ---------------------------------------------------------------------------
# Graph cache.

def _is_tensor(t):
    return isinstance(t, Tensor)


class _GraphCache:
    """One hector.Graph (whose kernel arrays are computed once per Graph),
    rebuilt only when the tensors it came from change: another tensor
    object, an in-place change (version counter), or other sizes. The
    source tensors are held, so their ids cannot be reused while cached.
    Copies and pickles of a layer start empty."""

    def __init__(self):
        self._key = None
        self._graph = None

    @staticmethod
    def _key_of(tensors, extra):
        """(the tensors, their state, extra); None when one is not a
        tensor (the caller's checks report it) or is an inference tensor
        (no version counter): those are never cached. Built and compared
        with list operations, not per-tensor Python loops: an HGTConv's
        key holds one tensor per relation (fb15k: 474) on every call."""
        tensors = list(tensors)
        if not all(map(_is_tensor, tensors)) or \
                any(map(Tensor.is_inference, tensors)):
            return None
        state = [(t._version, t.data_ptr(), t.shape, t.device)
                 for t in tensors]
        return tensors, state, extra

    def _matches(self, key):
        if key is None or self._key is None:
            return False
        (new, state, extra), (old, old_state, old_extra) = key, self._key
        return (extra == old_extra and state == old_state
                and all(map(operator.is_, new, old)))

    def lookup(self, tensors, extra):
        """The graph cached for these very tensors (unchanged since) and
        `extra`, else None. A hit also means the checks that ran before the
        graph was built hold still: same objects, versions and sizes."""
        return self._graph if self._matches(self._key_of(tensors, extra)) \
            else None

    def store(self, tensors, extra, graph):
        self._key, self._graph = self._key_of(tensors, extra), graph

    def __deepcopy__(self, memo):
        return _GraphCache()

    def __getstate__(self):
        return {"_key": None, "_graph": None}


def _contiguous(t):
    return t if t.is_contiguous() else t.contiguous()


def rows_together(blocks):
    """torch.cat(blocks) of 2-D blocks of rows (same width, dtype and
    device), but a view instead of a copy when the non-empty blocks are
    consecutive rows of one row-major buffer: the split of an earlier
    HGTConv's output, or slices of one feature matrix. The result may then
    alias the blocks; nothing here writes to it. Spanning x and the
    output rows instead of copying them took 0.2 ms off HGT's 4.4 ms
    inference step on am on an H200 (docs/perf-notes.md section 110)."""
    view = _consecutive_view([b for b in blocks if b.size(0) > 0])
    return view if view is not None else torch.cat(blocks)


def _consecutive_view(blocks):
    """One [rows, width] tensor spanning `blocks` when each is row-major
    and starts where the one before ends in the same buffer, else None.
    With autograd recording (grad enabled, some block requiring grad) the
    span is a view of the blocks' common base, and only when every block is
    a view with a history (grad_fn) leading to it, so gradients reach what
    they would reach through the blocks; a view made under no_grad has
    none and falls back to the copy."""
    if not blocks:
        return None
    first = blocks[0]
    if first.dim() != 2 or first.size(1) == 0:
        return None
    width, size, dtype = first.size(1), first.element_size(), first.dtype
    start = first.storage_offset()
    # The start of the blocks' allocation: one buffer, hence one device.
    buffer = first.data_ptr() - start * size
    end = start
    # Cheapest test first: blocks that are separate tensors fail it at the
    # second block (a small graph's step pays every call for this loop).
    for b in blocks:
        if (b.storage_offset() != end or b.data_ptr() - end * size != buffer
                or b.dtype is not dtype or not b.is_contiguous()
                or b.dim() != 2 or b.size(1) != width):
            return None
        end += b.numel()
    rows = (end - start) // width
    if not (torch.is_grad_enabled() and any(b.requires_grad for b in blocks)):
        return first.as_strided((rows, width), (width, 1), start)
    base = first._base
    if (base is None or base.dim() != 2 or base.size(1) != width
            or not base.is_contiguous()
            or any(b._base is not base or b.grad_fn is None for b in blocks)):
        return None
    offset = start - base.storage_offset()
    if offset % width:
        return None
    return base.narrow(0, offset // width, rows)


def _block_diagonal(w):
    """[R, B, I, O] blocks -> [R, B*I, B*O] dense block-diagonal matrices
    (differentiable)."""
    R, B, I, O = w.shape
    eye = torch.eye(B, dtype=w.dtype, device=w.device)
    return torch.einsum("rbio,bc->rbico", w, eye).reshape(R, B * I, B * O)


# ---------------------------------------------------------------------------
# RGCNConv

class RGCNConv(Module):
    r"""torch_geometric.nn.RGCNConv on the ``rgcn_pyg`` model:

    .. math::
        \mathbf{x}'_i = \mathbf{x}_i \Theta_{\mathrm{root}} +
        \sum_r \frac{1}{|\mathcal{N}_r(i)|}
        \sum_{j \in \mathcal{N}_r(i)} \mathbf{x}_j \Theta_r + \mathbf{b}

    Parameters (PyG's names and shapes): ``weight`` [R, in, out] (with
    ``num_bases``: [num_bases, in, out] and ``comp`` [R, num_bases]; with
    ``num_blocks``: [R, B, in/B, out/B]), ``root`` [in, out], ``bias``
    [out].

    Supported: ``aggr='mean'`` only; ``num_bases``, ``num_blocks``,
    ``root_weight=False`` and ``bias=False`` (the effective weights are
    formed in torch and passed to the kernels). ``is_sorted`` is accepted
    and has no effect. Not supported: a tuple ``in_channels`` (bipartite),
    ``x`` given as node indices or ``None``, a tuple ``x``, sparse
    adjacency.
    """

    def __init__(self, in_channels: int, out_channels: int,
                 num_relations: int, num_bases: int = None,
                 num_blocks: int = None, aggr: str = "mean",
                 root_weight: bool = True, is_sorted: bool = False,
                 bias: bool = True, **kwargs):
        super().__init__()
        if isinstance(in_channels, tuple):
            raise NotImplementedError(
                "RGCNConv: in_channels as a (source, target) tuple "
                "(bipartite graphs) is not supported")
        _check_channels(in_channels, "in_channels", "RGCNConv")
        _check_channels(out_channels, "out_channels", "RGCNConv")
        _check_channels(num_relations, "num_relations", "RGCNConv")
        if aggr != "mean":
            raise NotImplementedError(
                f"RGCNConv: aggr={aggr!r} is not supported (only 'mean')")
        if num_bases is not None and num_blocks is not None:
            raise ValueError("RGCNConv: num_bases and num_blocks cannot "
                             "both be set")
        if num_bases is not None:
            _check_channels(num_bases, "num_bases", "RGCNConv")
        if num_blocks is not None:
            _check_channels(num_blocks, "num_blocks", "RGCNConv")
            if in_channels % num_blocks or out_channels % num_blocks:
                raise ValueError(
                    f"RGCNConv: num_blocks={num_blocks} must divide "
                    f"in_channels={in_channels} and "
                    f"out_channels={out_channels}")
        _check_kwargs(kwargs, "RGCNConv")

        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_relations = num_relations
        self.num_bases = num_bases
        self.num_blocks = num_blocks
        self.aggr = aggr
        self.is_sorted = is_sorted

        # Registered in PyG's order, so state_dict keys come out alike.
        if num_bases is not None:
            self.weight = Parameter(
                torch.empty(num_bases, in_channels, out_channels))
            self.comp = Parameter(torch.empty(num_relations, num_bases))
        elif num_blocks is not None:
            self.weight = Parameter(torch.empty(
                num_relations, num_blocks, in_channels // num_blocks,
                out_channels // num_blocks))
            self.register_parameter("comp", None)
        else:
            self.weight = Parameter(
                torch.empty(num_relations, in_channels, out_channels))
            self.register_parameter("comp", None)
        if root_weight:
            self.root = Parameter(torch.empty(in_channels, out_channels))
        else:
            self.register_parameter("root", None)
        if bias:
            self.bias = Parameter(torch.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self._graph_cache = _GraphCache()
        self.reset_parameters()

    def reset_parameters(self):
        """PyG's initialisation: glorot for weight, comp and root; zero
        bias."""
        _glorot(self.weight)
        _glorot(self.comp)
        _glorot(self.root)
        _fill(self.bias, 0.0)

    def relation_weights(self) -> Tensor:
        """The effective [R, in, out] weight of every relation."""
        if self.num_bases is not None:
            return (self.comp @ self.weight.view(self.num_bases, -1)).view(
                self.num_relations, self.in_channels, self.out_channels)
        if self.num_blocks is not None:
            return _block_diagonal(self.weight)
        return self.weight

    def forward(self, x: Tensor, edge_index: Tensor,
                edge_type: Tensor = None) -> Tensor:
        """x [N, in_channels] float32, edge_index [2, E] int64, edge_type
        [E] int64 in [0, num_relations); returns [N, out_channels]."""
        if isinstance(x, tuple):
            raise NotImplementedError(
                "x: a (source, target) tuple (bipartite graphs) is not "
                "supported")
        if x is None:
            raise NotImplementedError(
                "x: None (featureless nodes) is not supported; pass "
                "features as a float tensor [num_nodes, in_channels]")
        num_nodes = _check_features(x, "x", self.in_channels)
        graph = _relational_graph(self._graph_cache, x.device, num_nodes,
                                  edge_index, edge_type, self.num_relations)
        _check_params(self, x.device, dtype=x.dtype)
        zeros = x.new_zeros
        values = {
            "x": _contiguous(x),
            "weight_": _contiguous(self.relation_weights()),
            "root": self.root if self.root is not None
            else zeros(self.in_channels, self.out_channels),
            "bias": self.bias if self.bias is not None
            else zeros(self.out_channels),
        }
        return _run_model("rgcn_pyg", graph, values,
                          in_dim=self.in_channels, out_dim=self.out_channels)

    def __repr__(self):
        return (f"{self.__class__.__name__}({self.in_channels}, "
                f"{self.out_channels}, num_relations={self.num_relations})")


def _relational_graph(cache, device, num_nodes, edge_index, edge_type,
                      num_relations):
    """The checked hector.Graph of a homogeneous-node relational graph
    (cached in `cache`). A cached graph was built from these very tensors,
    unchanged, for the same sizes and device, so their checks held then and
    hold still: they run only on a miss."""
    tensors, extra = (edge_index, edge_type), (num_nodes, num_relations,
                                               device)
    graph = cache.lookup(tensors, extra)
    if graph is None:
        _check_edge_index(edge_index, "edge_index", device)
        _check_edge_type(edge_type, edge_index.size(1), device)
        _check_ids(edge_index, "edge_index", num_nodes,
                   f"x with {num_nodes} rows")
        _check_ids(edge_type, "edge_type", num_relations,
                   f"num_relations={num_relations}")
        graph = Graph(edge_index, edge_type, None, num_nodes,
                      num_etypes=num_relations, num_ntypes=1)
        cache.store(tensors, extra, graph)
    return graph


# ---------------------------------------------------------------------------
# RGATConv

class RGATConv(Module):
    r"""torch_geometric.nn.RGATConv on the ``rgat_pyg`` model: across-
    relation additive self-attention. For an edge u -> v of relation r,
    with :math:`o_u = x_u W_r`, :math:`o_v = x_v W_r`:

    .. math::
        \alpha = \mathrm{softmax}_{\text{in-edges of } v}
        \mathrm{leaky\_relu}(o_v q + o_u k), \quad
        h_v = \Vert_h \sum \alpha_h\, o_{u,h} + b

    (the mean over heads instead of the concatenation when
    ``concat=False``).

    Parameters (PyG's names and shapes): ``q``, ``k`` [heads*out, heads],
    ``bias`` [heads*out] (``[out]`` when ``concat=False``), ``weight``
    [R, in, heads*out] (with ``num_bases``: ``att`` [R, num_bases] and
    ``basis`` [num_bases, in, heads*out]; with ``num_blocks``: ``weight``
    [R, B, in/B, heads*out/B]), and ``w``, ``l1``, ``b1``, ``l2``, ``b2``,
    which only PyG's ``mod`` variants read (kept for state_dict
    compatibility; unused here).

    Supported: ``attention_mechanism='across-relation'``,
    ``attention_mode='additive-self-attention'``, ``dim=1``, any ``heads``,
    ``concat``, ``negative_slope``, ``bias``, ``num_bases``,
    ``num_blocks``; ``dropout`` only in eval mode. Not supported:
    ``mod``, ``within-relation`` attention, multiplicative attention,
    ``edge_dim`` / ``edge_attr``, ``return_attention_weights``, node
    indices as ``x``.
    """

    def __init__(self, in_channels: int, out_channels: int,
                 num_relations: int, num_bases: int = None,
                 num_blocks: int = None, mod: str = None,
                 attention_mechanism: str = "across-relation",
                 attention_mode: str = "additive-self-attention",
                 heads: int = 1, dim: int = 1, concat: bool = True,
                 negative_slope: float = 0.2, dropout: float = 0.0,
                 edge_dim: int = None, bias: bool = True, **kwargs):
        super().__init__()
        _check_channels(in_channels, "in_channels", "RGATConv")
        _check_channels(out_channels, "out_channels", "RGATConv")
        _check_channels(num_relations, "num_relations", "RGATConv")
        _check_channels(heads, "heads", "RGATConv")
        _check_channels(dim, "dim", "RGATConv")
        if attention_mechanism not in ("within-relation", "across-relation"):
            raise ValueError("RGATConv: attention_mechanism must be "
                             "'within-relation' or 'across-relation', got "
                             f"{attention_mechanism!r}")
        if attention_mode not in ("additive-self-attention",
                                  "multiplicative-self-attention"):
            raise ValueError("RGATConv: attention_mode must be "
                             "'additive-self-attention' or "
                             "'multiplicative-self-attention', got "
                             f"{attention_mode!r}")
        if attention_mechanism != "across-relation":
            raise NotImplementedError(
                f"RGATConv: attention_mechanism={attention_mechanism!r} is "
                "not supported (only 'across-relation')")
        if attention_mode != "additive-self-attention":
            raise NotImplementedError(
                f"RGATConv: attention_mode={attention_mode!r} is not "
                "supported (only 'additive-self-attention')")
        if dim != 1:
            raise ValueError(f"RGATConv: dim={dim}: additive self-attention "
                             "needs dim=1")
        if mod is not None:
            raise NotImplementedError(
                f"RGATConv: mod={mod!r} is not supported (only None)")
        if edge_dim is not None:
            raise NotImplementedError(
                f"RGATConv: edge_dim={edge_dim} (edge features) is not "
                "supported")
        for arg, value in (("negative_slope", negative_slope),
                           ("dropout", dropout)):
            if isinstance(value, bool) or \
                    not isinstance(value, numbers.Real):
                raise TypeError(f"RGATConv: {arg}: expected a number, got "
                                f"{type(value).__name__}")
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"RGATConv: dropout must be in [0, 1], got "
                             f"{dropout}")
        if num_bases is not None and num_blocks is not None:
            raise ValueError("RGATConv: num_bases and num_blocks cannot "
                             "both be set")
        if num_bases is not None:
            _check_channels(num_bases, "num_bases", "RGATConv")
        if num_blocks is not None:
            _check_channels(num_blocks, "num_blocks", "RGATConv")
            if in_channels % num_blocks or \
                    (heads * out_channels) % num_blocks:
                raise ValueError(
                    f"RGATConv: num_blocks={num_blocks} must divide "
                    f"in_channels={in_channels} and heads * out_channels="
                    f"{heads * out_channels}")
        aggr = kwargs.pop("aggr", "add")
        if aggr != "add":
            raise NotImplementedError(
                f"RGATConv: aggr={aggr!r} is not supported (only 'add')")
        _check_kwargs(kwargs, "RGATConv")

        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_relations = num_relations
        self.num_bases = num_bases
        self.num_blocks = num_blocks
        self.mod = mod
        self.attention_mechanism = attention_mechanism
        self.attention_mode = attention_mode
        self.heads = heads
        self.dim = dim
        self.concat = concat
        self.negative_slope = negative_slope
        self.dropout = dropout
        self.edge_dim = edge_dim

        # Registered in PyG's order, so state_dict keys come out alike.
        hc = heads * out_channels
        self.q = Parameter(torch.empty(hc, heads * dim))
        self.k = Parameter(torch.empty(hc, heads * dim))
        if bias:
            self.bias = Parameter(
                torch.empty(hc if concat else out_channels))
        else:
            self.register_parameter("bias", None)
        self.lin_edge = None
        self.register_parameter("e", None)
        if num_bases is not None:
            self.att = Parameter(torch.empty(num_relations, num_bases))
            self.basis = Parameter(torch.empty(num_bases, in_channels, hc))
        elif num_blocks is not None:
            self.weight = Parameter(torch.empty(
                num_relations, num_blocks, in_channels // num_blocks,
                hc // num_blocks))
        else:
            self.weight = Parameter(torch.empty(num_relations, in_channels,
                                                hc))
        self.w = Parameter(torch.ones(out_channels))
        self.l1 = Parameter(torch.empty(1, out_channels))
        self.b1 = Parameter(torch.empty(1, out_channels))
        self.l2 = Parameter(torch.empty(out_channels, out_channels))
        self.b2 = Parameter(torch.empty(1, out_channels))
        self._graph_cache = _GraphCache()
        self.reset_parameters()

    def reset_parameters(self):
        """PyG's initialisation: glorot for the weights (or basis and att),
        q and k; zero bias; l1 = 1, b1 = b2 = 0, w = 1. l2 = 1/out_channels,
        which PyG intends but never stores (its reset leaves l2
        uninitialised); only `mod` variants read w, l1, b1, l2, b2."""
        if self.num_bases is not None:
            _glorot(self.basis)
            _glorot(self.att)
        else:
            _glorot(self.weight)
        _glorot(self.q)
        _glorot(self.k)
        _fill(self.bias, 0.0)
        _fill(self.l1, 1.0)
        _fill(self.b1, 0.0)
        _fill(self.l2, 1.0 / self.out_channels)
        _fill(self.b2, 0.0)
        _fill(self.w, 1.0)

    def relation_weights(self) -> Tensor:
        """The effective [R, in, heads * out] weight of every relation."""
        if self.num_bases is not None:
            return (self.att @ self.basis.view(self.num_bases, -1)).view(
                self.num_relations, self.in_channels,
                self.heads * self.out_channels)
        if self.num_blocks is not None:
            return _block_diagonal(self.weight)
        return self.weight

    def forward(self, x: Tensor, edge_index: Tensor,
                edge_type: Tensor = None, edge_attr: Tensor = None,
                size=None, return_attention_weights=None) -> Tensor:
        """x [N, in_channels] float32, edge_index [2, E] int64, edge_type
        [E] int64 in [0, num_relations); returns [N, heads * out_channels]
        ([N, out_channels] when concat=False)."""
        if edge_attr is not None:
            raise NotImplementedError("edge_attr: edge features are not "
                                      "supported")
        if return_attention_weights is not None:
            raise NotImplementedError(
                "return_attention_weights: not supported (the attention "
                "coefficients stay inside the generated kernels)")
        if self.training and self.dropout > 0:
            raise NotImplementedError(
                f"dropout: attention dropout ({self.dropout}) is not "
                "supported in training mode; use dropout=0 or eval()")
        num_nodes = _check_features(x, "x", self.in_channels)
        if size is not None and tuple(size) != (num_nodes, num_nodes):
            raise NotImplementedError(
                f"size: {tuple(size)} (a bipartite adjacency) is not "
                f"supported; only ({num_nodes}, {num_nodes}) or None")
        graph = _relational_graph(self._graph_cache, x.device, num_nodes,
                                  edge_index, edge_type, self.num_relations)
        _check_params(self, x.device, dtype=x.dtype)
        hc = self.heads * self.out_channels
        # With concat=False the heads are averaged, then the bias added:
        # the kernels run without bias and the rest is done here.
        add_bias = self.bias is not None and self.concat
        values = {
            "x": _contiguous(x),
            "weight_": _contiguous(self.relation_weights()),
            "q": self.q,
            "k": self.k,
            "bias": self.bias if add_bias else x.new_zeros(hc),
        }
        h = _run_model("rgat_pyg", graph, values, in_dim=self.in_channels,
                       out_dim=self.out_channels, heads=self.heads,
                       slope=float(self.negative_slope))
        if not self.concat:
            h = h.view(-1, self.heads, self.out_channels).mean(dim=1)
            if self.bias is not None:
                h = h + self.bias
        return h

    def __repr__(self):
        return (f"{self.__class__.__name__}({self.in_channels}, "
                f"{self.out_channels}, heads={self.heads})")


# ---------------------------------------------------------------------------
# HGTConv

class _Linear(Module):
    """torch_geometric.nn.Linear's parameters and default initialisation:
    weight [out, in] (kaiming uniform, a = sqrt(5)), bias [out] (uniform in
    +-1/sqrt(in))."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.weight = Parameter(torch.empty(out_channels, in_channels))
        self.bias = Parameter(torch.empty(out_channels))
        self.reset_parameters()

    def reset_parameters(self):
        _kaiming_uniform(self.weight, fan=self.in_channels)
        _uniform(self.bias, fan=self.in_channels)


class _DictLinear(Module):
    """torch_geometric.nn.HeteroDictLinear's parameters: one _Linear per
    type under ``lins.<type>``."""

    def __init__(self, in_channels: dict, out_channels):
        super().__init__()
        self.lins = ModuleDict({t: _Linear(c, out_channels)
                                for t, c in in_channels.items()})

    def reset_parameters(self):
        for lin in self.lins.values():
            lin.reset_parameters()


class _TypedWeight(Module):
    """torch_geometric.nn.HeteroLinear(bias=False)'s parameter: weight
    [num_types, in, out], kaiming uniform with fan = in."""

    def __init__(self, in_channels, out_channels, num_types):
        super().__init__()
        self.in_channels = in_channels
        self.weight = Parameter(
            torch.empty(num_types, in_channels, out_channels))
        self.reset_parameters()

    def reset_parameters(self):
        _kaiming_uniform(self.weight, fan=self.in_channels)


def _parameters_of(pdict, keys):
    """pdict[k] for k in keys, for a ParameterDict: read from its
    parameter table, which is several times faster than its __getitem__
    (a Module.__getattr__ lookup per key), and an HGTConv reads one p_rel
    per relation on every call (474 on fb15k). Entries that are no
    Parameter are not in that table and go through __getitem__."""
    table = pdict._parameters
    return [table[k] if k in table else pdict[k] for k in keys]


def hgt_pyg_params(conv, node_types, edge_types, heads):
    """The parameters of an HGTConv (PyG's, or ours: the same attributes)
    in models/hgt_pyg.hgnn's layout, as differentiable views: the per-type
    linears stacked in `node_types` order, k_rel/v_rel [heads*R, d, d]
    regrouped per relation, p_rel and skip concatenated."""
    R = len(edge_types)
    d = conv.k_rel.weight.size(-1)

    def stacked(lins, attr):
        return torch.stack([getattr(lins[t], attr) for t in node_types])

    def per_relation(w):
        return w.view(heads, R, d, d).transpose(0, 1).contiguous()

    return {
        "kqv_weight": stacked(conv.kqv_lin.lins, "weight"),
        "kqv_bias": stacked(conv.kqv_lin.lins, "bias"),
        "k_rel": per_relation(conv.k_rel.weight),
        "v_rel": per_relation(conv.v_rel.weight),
        "p_rel": torch.cat(_parameters_of(conv.p_rel, ["__".join(et)
                                                      for et in edge_types])),
        "out_lin_weight": stacked(conv.out_lin.lins, "weight"),
        "out_lin_bias": stacked(conv.out_lin.lins, "bias"),
        "skip": torch.cat([conv.skip[t] for t in node_types]),
    }


class HGTConv(Module):
    r"""torch_geometric.nn.HGTConv on the ``hgt_pyg`` model.

    ``forward(x_dict, edge_index_dict)`` flattens the node types into one
    node range (in ``metadata[0]`` order) and the edge types into relation
    ids (``metadata[1]`` order), runs the model, and splits the result back
    into a dict holding, like PyG, the node types of ``x_dict`` that are
    some edge type's destination (in the layer's node type order). Keys of
    ``x_dict`` that are no node type of the layer are ignored, as in PyG.
    The node types' features are read in place when they are consecutive
    rows of one tensor in the layer's node type order (an earlier
    HGTConv's output, or slices of one feature matrix), and copied into
    one tensor otherwise (see :func:`rows_together`).

    Parameters (PyG 2.8's names and shapes): ``kqv_lin.lins.<t>.weight``
    [3*out, in] and ``.bias``, ``out_lin.lins.<t>.weight`` [out, out] and
    ``.bias``, ``k_rel.weight`` and ``v_rel.weight`` [heads*R, d, d] (row
    h*R + r, d = out/heads), ``skip.<t>`` [1], ``p_rel.<src>__<rel>__<dst>``
    [1, heads].

    Not supported: ``in_channels`` other than ``out_channels`` (the model
    always applies the gated skip, which PyG applies exactly then), lazy
    ``in_channels=-1``, sparse adjacency.
    """

    def __init__(self, in_channels, out_channels: int, metadata,
                 heads: int = 1, **kwargs):
        super().__init__()
        _check_channels(out_channels, "out_channels", "HGTConv")
        _check_channels(heads, "heads", "HGTConv")
        if out_channels % heads != 0:
            raise ValueError(f"HGTConv: out_channels ({out_channels}) must "
                             f"be divisible by heads ({heads})")
        node_types, edge_types = _check_metadata(metadata)
        if isinstance(in_channels, dict):
            if set(in_channels) != set(node_types):
                raise ValueError(
                    "HGTConv: the keys of in_channels "
                    f"{sorted(in_channels)} must be the node types "
                    f"{sorted(node_types)}")
        else:
            in_channels = {t: in_channels for t in node_types}
        for t, c in in_channels.items():
            if c == -1:
                raise NotImplementedError(
                    "HGTConv: lazy in_channels=-1 is not supported")
            _check_channels(c, f"in_channels[{t!r}]", "HGTConv")
            if c != out_channels:
                raise NotImplementedError(
                    f"HGTConv: in_channels={c} (node type {t!r}) must equal "
                    f"out_channels={out_channels}: the hgt_pyg model always "
                    "applies the gated skip connection")
        _check_kwargs(kwargs, "HGTConv")

        self.in_channels = in_channels
        self.out_channels = out_channels
        self.heads = heads
        self.node_types = node_types
        self.edge_types = edge_types
        self.edge_types_map = {et: i for i, et in enumerate(edge_types)}
        self.dst_node_types = {et[-1] for et in edge_types}

        # Registered in PyG's order, so state_dict keys come out alike.
        self.kqv_lin = _DictLinear(in_channels, 3 * out_channels)
        self.out_lin = _DictLinear({t: out_channels for t in node_types},
                                   out_channels)
        d = out_channels // heads
        self.k_rel = _TypedWeight(d, d, heads * len(edge_types))
        self.v_rel = _TypedWeight(d, d, heads * len(edge_types))
        # Built the way PyG builds them: some torch versions sort the keys
        # of a ParameterDict made from a plain dict, but not of one filled
        # key by key, and the state_dict order follows.
        self.skip = ParameterDict({t: Parameter(torch.empty(1))
                                   for t in node_types})
        self.p_rel = ParameterDict()
        for et in edge_types:
            self.p_rel["__".join(et)] = Parameter(torch.empty(1, heads))
        self._graph_cache = _GraphCache()
        self.reset_parameters()

    def reset_parameters(self):
        """PyG's initialisation: the linears as torch_geometric.nn.Linear
        and HeteroLinear (kaiming uniform), skip = p_rel = 1."""
        self.kqv_lin.reset_parameters()
        self.out_lin.reset_parameters()
        self.k_rel.reset_parameters()
        self.v_rel.reset_parameters()
        for p in self.skip.values():
            _fill(p, 1.0)
        for p in self.p_rel.values():
            _fill(p, 1.0)

    def _model_params(self):
        """The parameters in hgt_pyg's layout (differentiable views)."""
        return hgt_pyg_params(self, self.node_types, self.edge_types,
                              self.heads)

    def forward(self, x_dict: dict, edge_index_dict: dict) -> dict:
        """x_dict: node type -> [N_t, in_channels] float32; edge_index_dict:
        edge type (src, rel, dst) -> [2, E] int64 (local ids of the source
        and destination types). Returns node type -> [N_t, out_channels]
        for the destination node types present in x_dict."""
        if not isinstance(x_dict, dict):
            raise TypeError("x_dict: expected a dict of node type -> "
                            f"tensor, got {type(x_dict).__name__}")
        if not isinstance(edge_index_dict, dict):
            raise TypeError("edge_index_dict: expected a dict of edge type "
                            f"-> tensor, got {type(edge_index_dict).__name__}")
        present = [t for t in self.node_types if t in x_dict]
        for t in present:
            if not isinstance(x_dict[t], Tensor):
                raise TypeError(f"x_dict[{t!r}]: expected a tensor, got "
                                f"{type(x_dict[t]).__name__}")
        if not present:
            raise ValueError("x_dict: holds none of the node types "
                             f"{self.node_types}")
        device = x_dict[present[0]].device
        counts = {}
        for t in self.node_types:
            if t in x_dict:
                name = f"x_dict[{t!r}]"
                counts[t] = _check_features(x_dict[t], name,
                                            self.in_channels[t])
                if x_dict[t].device != device:
                    raise ValueError(f"{name}: on {x_dict[t].device} but "
                                     f"x_dict[{present[0]!r}] is on {device}")
            else:
                counts[t] = 0
        _check_params(self, device, f"x_dict[{present[0]!r}]",
                      dtype=x_dict[present[0]].dtype)

        # The edge dict is checked and flattened only when the cached graph
        # was not built from these very tensors: with hundreds of relations
        # (fb15k: 474) the checks cost more host time than the kernels.
        relation = self.edge_types_map.get
        tensors = list(edge_index_dict.values())
        extra = (tuple(map(relation, edge_index_dict)),
                 tuple(counts.values()), device)
        graph = self._graph_cache.lookup(tensors, extra)
        if graph is None:
            edges = self._checked_edges(edge_index_dict, x_dict, device)
            graph = self._flat_graph(edges, counts, device)
            self._graph_cache.store(tensors, extra, graph)

        C = self.out_channels
        x = rows_together([_contiguous(x_dict[t]) if t in x_dict
                           else x_dict[present[0]].new_empty(0, C)
                           for t in self.node_types])
        values = {"x": x, **self._model_params()}
        h = _run_model("hgt_pyg", graph, values, in_dim=C, heads=self.heads)
        rows = dict(zip(self.node_types,
                        h.split([counts[t] for t in self.node_types])))
        return {t: rows[t] for t in self.kqv_lin.lins
                if t in x_dict and t in self.dst_node_types}

    def _checked_edges(self, edge_index_dict, x_dict, device):
        """[(relation id, edge_index)] of the edge dict, each checked."""
        edges = []
        for key, ei in edge_index_dict.items():
            name = f"edge_index_dict[{key!r}]"
            if key not in self.edge_types_map:
                raise ValueError(f"{name}: not an edge type of the layer's "
                                 f"metadata {self.edge_types}")
            _check_edge_index(ei, name, device)
            for end, t in (("source", key[0]), ("destination", key[-1])):
                if t not in x_dict and ei.size(1) > 0:
                    raise ValueError(f"{name}: has edges but x_dict has no "
                                     f"{end} node type {t!r}")
            edges.append((self.edge_types_map[key], ei))
        return edges

    def _flat_graph(self, edges, counts, device):
        """The hector.Graph of the flattened heterograph (ids checked)."""
        offsets, total = {}, 0
        for t in self.node_types:
            offsets[t], total = total, total + counts[t]
        srcs, dsts, types = [], [], []
        for r, ei in edges:
            s, _, d = self.edge_types[r]
            name = f"edge_index_dict[{self.edge_types[r]!r}]"
            _check_ids(ei[0], name + "[0]", counts[s],
                       f"x_dict[{s!r}] with {counts[s]} rows")
            _check_ids(ei[1], name + "[1]", counts[d],
                       f"x_dict[{d!r}] with {counts[d]} rows")
            srcs.append(ei[0] + offsets[s])
            dsts.append(ei[1] + offsets[d])
            types.append(torch.full((ei.size(1),), r, dtype=torch.int64,
                                    device=device))
        empty = torch.empty(0, dtype=torch.int64, device=device)
        edge_index = torch.stack([torch.cat(srcs) if srcs else empty,
                                  torch.cat(dsts) if dsts else empty])
        edge_type = torch.cat(types) if types else empty
        node_type = torch.repeat_interleave(
            torch.arange(len(self.node_types), device=device),
            torch.tensor([counts[t] for t in self.node_types],
                         device=device))
        return Graph(edge_index, edge_type, node_type, total,
                     num_etypes=len(self.edge_types),
                     num_ntypes=len(self.node_types))

    def __repr__(self):
        return (f"{self.__class__.__name__}(-1, {self.out_channels}, "
                f"heads={self.heads})")


def _check_metadata(metadata):
    """(node types, edge types) as lists, checked."""
    if not isinstance(metadata, (tuple, list)) or len(metadata) != 2:
        raise TypeError("HGTConv: metadata must be a pair (node types, "
                        "edge types)")
    node_types, edge_types = list(metadata[0]), [tuple(et) for et in
                                                 metadata[1]]
    if not node_types:
        raise ValueError("HGTConv: metadata has no node types")
    if not edge_types:
        raise ValueError("HGTConv: metadata has no edge types")
    if len(set(node_types)) != len(node_types):
        raise ValueError(f"HGTConv: metadata[0] repeats a node type: "
                         f"{node_types}")
    for t in node_types:
        if not isinstance(t, str) or not t or "." in t:
            raise ValueError(f"HGTConv: node type {t!r} must be a non-empty "
                             "string without '.'")
    for et in edge_types:
        if len(et) != 3 or et[0] not in node_types or \
                et[2] not in node_types:
            raise ValueError(f"HGTConv: edge type {et!r} must be (source "
                             "node type, relation, destination node type)")
        if "." in "__".join(et):
            raise ValueError(f"HGTConv: edge type {et!r} must not contain "
                             "'.'")
    if len(set(edge_types)) != len(edge_types):
        raise ValueError(f"HGTConv: metadata[1] repeats an edge type: "
                         f"{edge_types}")
    return node_types, edge_types

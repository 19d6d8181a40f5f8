"""CUDA graph replay of a generated op on small graphs (opt-in:
``HECTOR_CUDA_GRAPHS=1``).

One call of a generated op spends about 100 us on the host: the argument
checks, about ten allocations, a dozen launches and the autograd node.
:func:`run` records the op's launches once in a CUDA graph
(``torch.cuda.CUDAGraph``), the backward's too when autograd needs them,
and from then on replays the graph: one launch instead of a dozen, and
none of the host work, for a copy of each non-parameter input and of each
result.

The generated ops replay their own launches from CUDA graphs, without
copies, when a call repeats an earlier call's arguments
(templates/LaunchGraphCache.h, on by default; docs/perf-notes.md section
85). Under this module's capture they run eagerly into it, so the two
do not nest. What this module saves beyond those is the host work around
the launches (the argument checks, the allocations, the autograd node),
at the cost of the copies.

It is off by default because on the benchmark's graphs it did not pay
(H100, docs/perf-notes.md section 18): their kernels take 0.15 ms and more
a call, the host work overlaps them when steps follow each other, and the
copies cost what the launches saved: 0.94x of eager, geometric mean of
the harness's 24 cases on aifb, mutag, bgs and fb15k, and from 0.62x to
1.75x by case with steps back to back, on these graphs and on them
scaled to 1% and 10% of their size. It may pay where a layer's kernels
take a few microseconds.

A recording belongs to one *signature*: the library, the hyper-parameters,
the grad mode and which values require grad, the deterministic flag, every
value's shape, strides, dtype and device, and the address of every
parameter. Parameters (``nn.Parameter``) are read in place at their
address, so an optimizer's in-place update is seen by the next replay; a
new parameter tensor is a new signature. Every other value (the features
``x``, a weight computed from bases) is copied into the recording's own
buffer before each replay, and its gradient flows back through the copy.

When a recording is used:

* ``HECTOR_CUDA_GRAPHS=1`` (read on every call);
* the graph is on a CUDA device and has at most ``HECTOR_CUDA_GRAPH_EDGES``
  edges (default 2**20; larger graphs spend their time in kernels, and a
  recording keeps its intermediates allocated between calls);
* the signature has run eagerly twice before (the first calls build the
  graph's arrays and the kernels' lazy state, which must not be recorded);
* no stream is capturing already (inside a caller's own CUDA graph the op
  runs eagerly, so that the caller's capture records it).

The results are always fresh tensors (the recording's outputs and gradients
are cloned), so a caller may keep them across calls. A recording holds one
set of saved intermediates, so while a training replay's backward is still
pending (its autograd graph alive and not yet run backward), another call
with the same signature (a layer used twice in one model) runs eagerly; a
backward through a replay that has since been replayed again (backward with
``retain_graph=True``, another forward, then a second backward) raises
RuntimeError instead of using overwritten intermediates. Double backward
through a replay is not supported (RuntimeError from autograd).

A capture that fails (an op that cannot be recorded) leaves the signature
eager for good, with one warning.
"""

import os
import warnings
import weakref

import torch

__all__ = ["run", "max_edges", "enabled"]

_DEFAULT_MAX_EDGES = 1 << 20
# Eager calls of a signature before it is recorded.
_EAGER_CALLS = 2
# Signatures remembered per graph; the oldest is dropped beyond this (its
# recording's memory with it).
_MAX_SIGNATURES = 8


def enabled() -> bool:
    """True when ``HECTOR_CUDA_GRAPHS`` is ``1`` (read on every call)."""
    return os.environ.get("HECTOR_CUDA_GRAPHS", "0") == "1"


def max_edges() -> int:
    """The largest graph, in edges, whose op calls are replayed
    (``HECTOR_CUDA_GRAPH_EDGES``, default 2**20)."""
    text = os.environ.get("HECTOR_CUDA_GRAPH_EDGES")
    if text is None:
        return _DEFAULT_MAX_EDGES
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"HECTOR_CUDA_GRAPH_EDGES: expected an integer, "
                         f"got {text!r}") from None


def _by_address(t):
    """Parameters are recorded at their address (read in place by every
    replay); everything else, a leaf that requires grad included (a fresh
    one each step would be a new signature each step), is copied into the
    recording's buffer."""
    return isinstance(t, torch.nn.Parameter)


def _signature(lib_name, args, hypers, grad):
    parts = [lib_name, hypers, grad,
             torch.are_deterministic_algorithms_enabled()]
    for t in args:
        parts.append((t.shape, t.stride(), t.dtype, t.device,
                      t.requires_grad and grad,
                      t.data_ptr() if _by_address(t) else None))
    return tuple(parts)


class _Pending:
    """Held by a training replay's autograd node until its backward runs;
    the recording is busy while one is alive (see the module docstring)."""
    __slots__ = ("__weakref__",)


class _Recording:
    """One signature's state: eager calls so far, then the CUDA graphs and
    their static buffers."""

    def __init__(self):
        self.eager_calls = 0
        self.failed = False
        self.forward = None        # torch.cuda.CUDAGraph
        self.backward = None       # torch.cuda.CUDAGraph or None
        self.keep = None           # tensors the graphs read or write
        self.copied = []           # (position, static buffer)
        self.outputs = []          # the forward's static outputs
        self.grad_inputs = []      # positions of the values that get grads
        self.grad_outputs = []     # (output position, static grad buffer)
        self.grads = []            # the backward's static grads
        self.generation = 0        # forward replays so far
        self.pending = None        # weakref to the live _Pending, or None

    def busy(self):
        return self.pending is not None and self.pending() is not None

    # -- recording ---------------------------------------------------------

    def record(self, op, arrays, args, hypers, grad):
        statics = []
        for i, t in enumerate(args):
            # Leaves of the recording's own: a parameter's alias shares its
            # memory but not its autograd node, whose stream (the eager
            # calls') would make the backward's capture wait on a stream
            # outside it.
            s = t.detach() if _by_address(t) else t.detach().clone()
            if grad and t.requires_grad:
                s.requires_grad_(True)
            if not _by_address(t):
                self.copied.append((i, s))
            statics.append(s)
        self.grad_inputs = [i for i, t in enumerate(args)
                            if grad and t.requires_grad]
        forward = torch.cuda.CUDAGraph()
        with torch.cuda.graph(forward):
            outs = op(arrays, *statics, *hypers)
        self.outputs = list(outs)
        self.forward = forward
        self.keep = (arrays, statics)
        if not self.grad_inputs:
            return
        diff = [(k, o) for k, o in enumerate(self.outputs) if o.requires_grad]
        self.grad_outputs = [(k, torch.empty_like(o)) for k, o in diff]
        backward = torch.cuda.CUDAGraph()
        with torch.cuda.graph(backward, pool=forward.pool()):
            grads = torch.autograd.grad(
                [o for _, o in diff], [statics[i] for i in self.grad_inputs],
                grad_outputs=[g for _, g in self.grad_outputs],
                allow_unused=True)
        self.grads = list(grads)
        self.backward = backward
        # The static outputs stay in autograd's graph only as buffers now.
        self.outputs = [o.detach() for o in self.outputs]

    # -- replay ------------------------------------------------------------

    def replay_forward(self, args):
        for i, s in self.copied:
            s.detach().copy_(args[i])
        self.forward.replay()
        self.generation += 1
        return [o.clone() for o in self.outputs]

    def replay_backward(self, generation, grads):
        if generation != self.generation:
            raise RuntimeError(
                "hector: backward through a CUDA graph replay whose saved "
                "intermediates were overwritten by a later call of the same "
                "layer (backward with retain_graph=True, then another "
                "forward); run the backward before the next forward, or "
                "unset HECTOR_CUDA_GRAPHS")
        for k, s in self.grad_outputs:
            g = grads[k]
            if g is None:
                s.zero_()
            else:
                s.copy_(g)
        self.backward.replay()
        self.pending = None
        out = [None] * len(self.keep[1])
        for i, g in zip(self.grad_inputs, self.grads):
            out[i] = None if g is None else g.clone()
        return out


class _Replayed(torch.autograd.Function):
    """A training replay as one autograd node: forward replays the forward
    graph, backward the backward graph."""

    @staticmethod
    def forward(ctx, rec, *args):
        outs = rec.replay_forward(args)
        ctx.rec = rec
        ctx.generation = rec.generation
        ctx.pending = _Pending()
        rec.pending = weakref.ref(ctx.pending)
        return tuple(outs)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads):
        return (None, *ctx.rec.replay_backward(ctx.generation, grads))


def _recordings(graph):
    table = graph.__dict__.get("_replays")
    if table is None:
        table = graph._replays = {}
    return table


def _recording_for(graph, key):
    table = _recordings(graph)
    rec = table.get(key)
    if rec is None:
        if len(table) >= _MAX_SIGNATURES:
            del table[next(iter(table))]
        rec = table[key] = _Recording()
    return rec


def run(op, lib_name, graph, args, hypers, edge_order="given"):
    """``op(graph.kernel_arrays(edge_order), *args, *hypers)``, replayed
    from a CUDA graph when the module docstring's conditions hold. `args`
    are the op's tensor arguments in order (already type-checked), `hypers`
    the tuple of its hyper-parameter values, `edge_order` the numbering of
    the edges that the layer runs on (hector.Graph.kernel_arrays). Returns
    the op's outputs."""
    def arrays():
        return graph.kernel_arrays(edge_order)

    device = graph.device
    if (device.type != "cuda" or not enabled() or
            graph.num_edges > max_edges() or
            torch.cuda.is_current_stream_capturing()):
        return op(arrays(), *args, *hypers)
    grad = torch.is_grad_enabled() and any(t.requires_grad for t in args)
    key = _signature(lib_name, args, hypers, grad)
    rec = _recording_for(graph, key)
    if rec.forward is None:
        if rec.failed or rec.eager_calls < _EAGER_CALLS:
            outs = op(arrays(), *args, *hypers)
            # Counted once it succeeded: bad arguments never get recorded.
            rec.eager_calls += 1
            return outs
        try:
            with torch.cuda.device(device):
                rec.record(op, arrays(), args, hypers, grad)
        except Exception as exc:  # noqa: BLE001 - any failure: stay eager
            rec.failed = True
            rec.forward = rec.backward = rec.keep = None
            warnings.warn(f"hector: {lib_name}: the op could not be recorded "
                          f"in a CUDA graph ({exc}); it runs eagerly",
                          RuntimeWarning, stacklevel=3)
            return op(arrays(), *args, *hypers)
    if not grad:
        return rec.replay_forward(args)
    if rec.busy():
        return op(arrays(), *args, *hypers)
    return list(_Replayed.apply(rec, *args))

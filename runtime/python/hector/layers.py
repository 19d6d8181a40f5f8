"""Compiled layers: the libraries hectorc generates, as Python objects.

``hectorc MODEL.hgnn -o DIR`` writes ``DIR/layer.json`` (the ops' argument
order, shapes and hyper-parameters) and the sources of
``libhector_<model>.so``, whose torch ops run the generated kernels
(docs/codegen.md). :func:`load` pairs the two: it reads ``layer.json``,
finds and loads the library, and returns a :class:`LayerLibrary`, which
computes argument shapes, runs the op by argument name
(:meth:`LayerLibrary.run`) and provides a ``torch.nn.Module`` owning the
layer's weights (``LayerLibrary.Layer``).

torch registers one library per op namespace (``hector_<model>``) and
cannot unload one; loading a second file with the same namespace would
abort the process, so :func:`load` refuses it with a RuntimeError.
"""

import fractions
import json
import math
import numbers
import os
import re
import threading
from typing import Dict, List, Optional, Tuple, Union

import torch

from . import _ext, replay
from .graph import Graph

__all__ = ["LayerLibrary", "HectorLayer", "load", "from_pyg"]

# layer.json "rows" -> the graph size that gives the leading dimension
# (None: a global value, no leading dimension).
_ROW_SIZES = {
    "node_rows": "num_nodes",
    "edge_rows": "num_edges",
    "etype_rows": "num_etypes",
    "ntype_rows": "num_ntypes",
    "pair_rows": "num_pairs",
    "global": None,
}
_SIZE_KEYS = ("num_nodes", "num_edges", "num_etypes", "num_ntypes",
              "num_pairs")
_LAYER_JSON_FORMAT = 1


# --------------------------------------------------------------------------
# Dimension expressions
# --------------------------------------------------------------------------

_DIM_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_]*)|(.))")


def _parse_dim(text):
    """Parses a dim (ir/Dim.h's canonical text, or any integer expression
    with + - * / and parentheses over names and integers) into a function
    ``bindings -> Fraction`` and the set of names it reads."""
    tokens = []
    for number, name, other in _DIM_TOKEN.findall(text.strip()):
        tokens.append(("int", int(number)) if number else
                      ("name", name) if name else ("op", other))
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else ("end", None)

    def take():
        nonlocal pos
        tok = peek()
        pos += 1
        return tok

    def expr():
        node = term()
        while peek() in (("op", "+"), ("op", "-")):
            op = take()[1]
            node = (op, node, term())
        return node

    def term():
        node = unary()
        while peek() in (("op", "*"), ("op", "/")):
            op = take()[1]
            node = (op, node, unary())
        return node

    def unary():
        if peek() == ("op", "-"):
            take()
            return ("neg", unary())
        kind, value = take()
        if kind in ("int", "name"):
            return (kind, value)
        if (kind, value) == ("op", "("):
            node = expr()
            if take() != ("op", ")"):
                raise ValueError(f"bad dimension '{text}'")
            return node
        raise ValueError(f"bad dimension '{text}'")

    tree = expr()
    if pos != len(tokens):
        raise ValueError(f"bad dimension '{text}'")
    names = set()

    def collect(node):
        if node[0] == "name":
            names.add(node[1])
        elif node[0] != "int":
            for child in node[1:]:
                collect(child)

    collect(tree)

    def evaluate(bindings):
        def ev(node):
            kind = node[0]
            if kind == "int":
                return fractions.Fraction(node[1])
            if kind == "name":
                return fractions.Fraction(bindings[node[1]])
            if kind == "neg":
                return -ev(node[1])
            a, b = ev(node[1]), ev(node[2])
            if kind == "+":
                return a + b
            if kind == "-":
                return a - b
            if kind == "*":
                return a * b
            if b == 0:
                raise ZeroDivisionError
            return a / b
        return ev(tree)

    return evaluate, names


# --------------------------------------------------------------------------
# Hyper-parameters and graph sizes
# --------------------------------------------------------------------------


def _check_hypers(lib, given):
    """``{name: value}`` of every hyper of `lib`: the defaults overridden by
    `given`. Unknown names raise TypeError; a value of the wrong type raises
    TypeError, a non-integral or non-positive int hyper ValueError."""
    out = dict(lib.hypers)
    for key, value in given.items():
        if key not in out:
            raise TypeError(
                f"{lib.name}: unknown hyper-parameter '{key}'; its "
                f"hyper-parameters are: {', '.join(out) or '(none)'}")
        kind = lib._hyper_types[key]
        if isinstance(value, torch.Tensor) and value.dim() == 0:
            value = value.item()
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{lib.name}: hyper-parameter {key}: expected "
                            f"a number, got {type(value).__name__}")
        if kind == "int":
            if not isinstance(value, numbers.Integral) and \
                    not float(value).is_integer():
                raise ValueError(f"{lib.name}: hyper-parameter {key}: "
                                 f"expected an integer, got {value}")
            value = int(value)
            if value < 1:
                raise ValueError(f"{lib.name}: hyper-parameter {key} must "
                                 f"be a positive integer, got {value}")
            if value > 2**63 - 1:
                raise ValueError(f"{lib.name}: hyper-parameter {key} must "
                                 f"be below 2**63, got {value}")
        else:
            value = float(value)
        out[key] = value
    return out


def _edge_order(values):
    """The numbering of the edges a layer runs on (Graph.kernel_arrays):
    "dst" when none of its arguments, outputs or gradients is per edge, so
    that the caller never sees the kernels' edge ids; else "given".
    HECTOR_EDGE_ORDER=given keeps the given numbering for every layer (to
    compare the two; docs/perf-notes.md section 38)."""
    env = os.environ.get("HECTOR_EDGE_ORDER", "")
    if env not in ("", "given"):
        raise ValueError(f"HECTOR_EDGE_ORDER: expected 'given' or unset, "
                         f"got {env!r}")
    per_edge = any(v["rows"] == "edge_rows" for v in values)
    if env == "given" or per_edge:
        return "given"
    return "dst"


def _sizes_of(graph_or_sizes, needed):
    """``{size key: int}`` for the keys in `needed`, from a hector.Graph or a
    dict such as ``dict(num_nodes=..., num_edges=..., ...)``."""
    if isinstance(graph_or_sizes, Graph):
        g = graph_or_sizes
        sizes = {"num_nodes": g.num_nodes, "num_edges": g.num_edges,
                 "num_etypes": g.num_etypes, "num_ntypes": g.num_ntypes}
        if "num_pairs" in needed:
            sizes["num_pairs"] = g.cpp().num_pairs
        return sizes
    if not isinstance(graph_or_sizes, dict):
        raise TypeError("graph_or_sizes: expected a hector.Graph or a dict "
                        "of sizes (num_nodes, num_edges, num_etypes, "
                        f"num_ntypes), got {type(graph_or_sizes).__name__}")
    sizes = {}
    for key, value in graph_or_sizes.items():
        if key not in _SIZE_KEYS:
            raise TypeError(f"graph_or_sizes: unknown size '{key}'; the "
                            f"sizes are: {', '.join(_SIZE_KEYS)}")
        if isinstance(value, bool) or not isinstance(value,
                                                     numbers.Integral):
            raise TypeError(f"graph_or_sizes['{key}']: expected an int, got "
                            f"{type(value).__name__}")
        value = int(value)
        if value < 0:
            raise ValueError(f"graph_or_sizes['{key}']: must be "
                             f"non-negative, got {value}")
        sizes[key] = value
    missing = [k for k in _SIZE_KEYS if k in needed and k not in sizes]
    if missing:
        raise ValueError(f"graph_or_sizes: missing {', '.join(missing)} "
                         "(needed by the layer's arguments)")
    return sizes


# --------------------------------------------------------------------------
# Finding and loading the libraries
# --------------------------------------------------------------------------

_LOCK = threading.RLock()
_BY_DIR = {}        # real path of the layer.json directory -> LayerLibrary
_LOADED_LIBS = {}   # real path of a .so -> (namespace, stat at load time)


def _library_candidates(directory, library, bundled):
    """Where lib<library>.so is looked for, in order. The main build's
    $HECTOR_BUILD_DIR/lib is looked at only for a bundled model's directory:
    a library there was built from the bundled sources, not from another
    directory that happens to define a model of the same name."""
    filename = f"lib{library}.so"
    paths = [os.path.join(directory, filename),
             os.path.join(directory, "lib", filename),
             os.path.join(directory, "build", "lib", filename)]
    if bundled:
        paths.append(os.path.join(_ext.build_dir(), "lib", filename))
    return paths


def _is_bundled_dir(directory):
    real = os.path.realpath(directory)
    parent = os.path.dirname(real)
    return any(os.path.realpath(root) == parent
               for root in (_ext.installed_bundled_dir(),
                            _ext.source_bundled_dir()))


def _namespace_registered(namespace):
    """Whether some loaded library registered `namespace::forward`. (The
    schema list answers this on every torch version; _jit_get_operation
    raises on 1.13 but returns (None, None) on 2.x for an unknown op.)"""
    name = f"{namespace}::forward"
    return any(s.name == name for s in torch._C._jit_get_all_schemas())


def _load_shared_library(path, namespace):
    """torch.ops.load_library(path) once; refuses (RuntimeError) a second
    library with an already registered namespace, which would abort."""
    real = os.path.realpath(path)
    st = os.stat(real)
    stamp = (st.st_mtime_ns, st.st_size)
    known = _LOADED_LIBS.get(real)
    if known is not None:
        if known[1] != stamp:
            raise RuntimeError(
                f"{path}: changed on disk since it was loaded into this "
                "process; torch cannot unload a library, so restart Python "
                "to use the new build")
        return
    loaded = {os.path.realpath(p) for p in torch.ops.loaded_libraries}
    if real not in loaded and _namespace_registered(namespace):
        other = next((p for p, (ns, _) in _LOADED_LIBS.items()
                      if ns == namespace), None)
        where = f" (from {other})" if other else ""
        raise RuntimeError(
            f"{path}: the op namespace {namespace} is already registered in "
            f"this process{where}; torch allows one library per namespace "
            "and cannot unload one. Give the model another name in its "
            ".hgnn file, or load this library in a separate process")
    torch.ops.load_library(real)
    _LOADED_LIBS[real] = (namespace, stamp)


def _resolve_dir(path):
    """The directory holding layer.json for `path` (a directory or a
    bundled model name), and whether it is a bundled model's."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError("path: expected a directory (hectorc -o output) or "
                        f"a bundled model name, got {type(path).__name__}")
    if os.path.isdir(path):
        if not os.path.isfile(os.path.join(path, "layer.json")):
            raise FileNotFoundError(
                f"{path}: no layer.json in this directory (write one with "
                f"`hectorc MODEL.hgnn -o {path}` or hector.compile)")
        return path, _is_bundled_dir(path)
    bundled = _ext.bundled_model_dirs()
    if path in bundled:
        return bundled[path], True
    raise FileNotFoundError(
        f"{path}: neither a directory holding layer.json nor a bundled "
        f"model (bundled: {', '.join(bundled) or 'none found'})")


def load(path: Union[str, os.PathLike]) -> "LayerLibrary":
    """The compiled layer in `path`, a :class:`LayerLibrary`.

    `path` is a directory holding ``layer.json`` (``hectorc -o`` output) or
    the name of a bundled model (``"rgat"``, see :mod:`hector.models`). Its
    ``libhector_<model>.so`` is looked for in ``<path>/``, ``<path>/lib/``,
    ``<path>/build/lib/`` and, for the bundled models only,
    ``$HECTOR_BUILD_DIR/lib`` (default ``<repo>/build/lib``); a
    FileNotFoundError lists those places when it is in none. The library is
    loaded into torch once; loading the same directory again returns the
    same object.
    """
    directory, bundled = _resolve_dir(path)
    real = os.path.realpath(directory)
    with _LOCK:
        lib = _BY_DIR.get(real)
        if lib is not None:
            # Checks the library on disk is still the one loaded.
            _load_shared_library(lib.library_path, lib.library)
            return lib
        lib = LayerLibrary(directory, bundled)
        _BY_DIR[real] = lib
        return lib


# --------------------------------------------------------------------------
# LayerLibrary
# --------------------------------------------------------------------------


class LayerLibrary:
    """One compiled layer: its ``layer.json`` and its loaded torch ops.

    Attributes:
        name: the model's name (``"rgat"``).
        library: the library / op namespace (``"hector_rgat"``).
        info: the parsed ``layer.json``.
        path: the directory holding ``layer.json``.
        library_path: the loaded ``libhector_<model>.so``.
        ops: ``torch.ops.hector_<model>`` (``forward``, ``forward_kernels``,
            ``backward_kernels``, and ``inference_kernels`` where the layer
            has an inference program; docs/codegen.md).
        hypers: ``{name: default}`` (int or float) in declaration order.
        inputs, params, outputs: the names, in declaration order.
        Layer: a :class:`HectorLayer` subclass bound to this library.

    Use :func:`load` rather than the constructor.
    """

    def __init__(self, directory: str, bundled: bool = False):
        self.path = os.path.abspath(directory)
        json_path = os.path.join(self.path, "layer.json")
        with open(json_path, encoding="utf-8") as f:
            info = json.load(f)
        if info.get("format") != _LAYER_JSON_FORMAT:
            raise ValueError(f"{json_path}: layer.json format "
                             f"{info.get('format')!r} is not supported "
                             f"(expected {_LAYER_JSON_FORMAT}); regenerate "
                             "it with this version's hectorc")
        self.info = info
        self.name = info["model"]
        self.library = info["library"]
        self._hyper_types = {h["name"]: h["type"] for h in info["hypers"]}
        self.hypers = {h["name"]: (int(h["default"]) if h["type"] == "int"
                                   else float(h["default"]))
                       for h in info["hypers"]}
        self.inputs = [a["name"] for a in info["arguments"]
                       if a["kind"] == "input"]
        self.params = [a["name"] for a in info["arguments"]
                       if a["kind"] == "param"]
        self.outputs = [o["name"] for o in info["outputs"]]
        self._arguments = [a["name"] for a in info["arguments"]]
        self._hyper_memo = {}
        self._decls = {}
        for a in list(info["arguments"]) + list(info["outputs"]):
            if a["rows"] not in _ROW_SIZES:
                raise ValueError(f"{json_path}: {a['name']} has unknown rows "
                                 f"'{a['rows']}'")
            self._decls[a["name"]] = (a["rows"], [
                (dim, *_parse_dim(dim)) for dim in a["shape"]])
        self.edge_order = _edge_order(
            list(info["arguments"]) + list(info["outputs"]) +
            list(info.get("backward_outputs", [])))

        candidates = _library_candidates(self.path, self.library, bundled)
        found = next((p for p in candidates if os.path.isfile(p)), None)
        if found is None:
            raise FileNotFoundError(
                f"{self.name}: lib{self.library}.so not found; looked in:\n  "
                + "\n  ".join(candidates)
                + f"\nBuild it with hector.compile(..., build=True) or "
                f"`cmake -S {self.path} -B {self.path}/build "
                "-DHECTOR_SOURCE_DIR=<hector checkout> && cmake --build "
                f"{self.path}/build`")
        self.library_path = os.path.abspath(found)
        _load_shared_library(self.library_path, self.library)
        self.Layer = type(_class_name(self.name), (HectorLayer,),
                          {"library": self, "__module__": __name__,
                           "__doc__": f"The {self.name} layer "
                           f"({self.path}); see HectorLayer."})

    @property
    def ops(self):
        return getattr(torch.ops, self.library)

    def shapes(self, graph_or_sizes: Union[Graph, Dict[str, int]],
               **hypers) -> Dict[str, Tuple[int, ...]]:
        """``{name: tuple}``: the full tensor shape of every input, param and
        output on `graph_or_sizes` (a :class:`hector.Graph` or a dict with
        ``num_nodes``, ``num_edges``, ``num_etypes``, ``num_ntypes``; only
        the sizes the layer uses are required) with `hypers` (defaults for
        the others). Rows come first (``[num_nodes, *shape]``), a global
        value has none. A dim that is not a positive whole number raises
        ValueError naming it and the hypers it reads."""
        hypers = _check_hypers(self, hypers)
        needed = {_ROW_SIZES[rows] for rows, _ in self._decls.values()}
        sizes = _sizes_of(graph_or_sizes, needed)
        ints = {k: v for k, v in hypers.items()
                if self._hyper_types[k] == "int"}
        out = {}
        for name, (rows, dims) in self._decls.items():
            shape = [] if _ROW_SIZES[rows] is None else \
                [sizes[_ROW_SIZES[rows]]]
            for text, evaluate, names in dims:
                shape.append(self._dim_value(name, text, evaluate, names,
                                             ints))
            out[name] = tuple(shape)
        return out

    def _dim_value(self, name, text, evaluate, names, ints):
        used = ", ".join(f"{n}={ints[n]}" for n in sorted(names)
                         if n in ints)
        unknown = sorted(n for n in names if n not in ints)
        if unknown:
            raise ValueError(f"{self.name}: {name}: dimension '{text}' reads "
                             f"{', '.join(unknown)}, not an int "
                             "hyper-parameter of the layer")
        try:
            value = evaluate(ints)
        except ZeroDivisionError:
            raise ValueError(f"{self.name}: {name}: dimension '{text}' "
                             f"divides by zero with {used}") from None
        if value.denominator != 1:
            raise ValueError(f"{self.name}: {name}: dimension '{text}' is "
                             f"{value} with {used}, not a whole number")
        if value <= 0:
            raise ValueError(f"{self.name}: {name}: dimension '{text}' is "
                             f"{value} with {used}, not positive")
        return int(value)

    def run(self, graph: Graph, values: Dict[str, torch.Tensor],
            **hypers) -> Dict[str, torch.Tensor]:
        """Runs the layer's forward op on `graph` (a :class:`hector.Graph`).

        `values` maps every input and param name to a float32 contiguous
        tensor on the graph's device, of the shape :meth:`shapes` gives;
        `hypers` override the defaults. Returns ``{output name: tensor}``;
        gradients flow back to `values` through the generated backward
        kernels. Missing values raise ValueError, unknown ones TypeError; a
        tensor of the wrong dtype, device, shape or layout is reported by the
        op (TypeError / ValueError naming it). With HECTOR_CUDA_GRAPHS=1 the
        op's launches on a small CUDA graph are recorded once and replayed
        (:mod:`hector.replay`).
        """
        if not isinstance(graph, Graph):
            raise TypeError(f"graph: expected a hector.Graph, got "
                            f"{type(graph).__name__}")
        if not isinstance(values, dict):
            raise TypeError("values: expected a dict {name: tensor}, got "
                            f"{type(values).__name__}")
        unknown = [k for k in values if k not in self._arguments]
        if unknown:
            raise TypeError(
                f"{self.name}: unknown values {', '.join(map(repr, unknown))}"
                f"; its inputs are: {', '.join(self.inputs) or '(none)'}; "
                f"its params: {', '.join(self.params) or '(none)'}")
        missing = [k for k in self._arguments if k not in values]
        if missing:
            raise ValueError(f"{self.name}: missing values for "
                             f"{', '.join(missing)}")
        for k in self._arguments:
            if not isinstance(values[k], torch.Tensor):
                raise TypeError(f"{k}: expected a torch.Tensor, got "
                                f"{type(values[k]).__name__}")
        outs = self._run_arguments(graph,
                                   [values[k] for k in self._arguments],
                                   self._hyper_values(hypers))
        return dict(zip(self.outputs, outs))

    def _hyper_values(self, given: Dict[str, object]) -> tuple:
        """Every hyper's value in the op's order: the defaults overridden by
        `given`, checked as run() documents. Remembered per `given` when its
        values are plain ints and floats, so that a layer that calls with
        the same hypers every step checks them once (the check was a fifth
        of hector.nn's host time a call, docs/perf-notes.md section 110)."""
        # Only plain ints and floats are remembered: a 0-d tensor's value
        # can change under the same key.
        if not all(type(v) in (int, float) for v in given.values()):
            return tuple(_check_hypers(self, given).values())
        key = tuple(given.items())
        values = self._hyper_memo.get(key)
        if values is None:
            values = tuple(_check_hypers(self, given).values())
            if len(self._hyper_memo) < 64:
                self._hyper_memo[key] = values
        return values

    def _run_arguments(self, graph: Graph, args: List[torch.Tensor],
                       hyper_values: tuple) -> List[torch.Tensor]:
        """The forward op's outputs for `args` (one tensor per argument, in
        declaration order) and `hyper_values` (from _hyper_values): run()
        without its checks of the values dict, for callers that build the
        arguments themselves (hector.nn's layers). The op still checks each
        tensor's dtype, device and shape."""
        return replay.run(self.ops.forward, self.name, graph, args,
                          hyper_values, self.edge_order)

    def __repr__(self):
        return (f"LayerLibrary({self.name!r}, inputs={self.inputs}, "
                f"params={self.params}, outputs={self.outputs}, "
                f"hypers={self.hypers}, path={self.path!r})")


def _class_name(model):
    return "".join(p[:1].upper() + p[1:] for p in model.split("_")) + "Layer"


# --------------------------------------------------------------------------
# The nn.Module
# --------------------------------------------------------------------------


class HectorLayer(torch.nn.Module):
    """A compiled layer as a ``torch.nn.Module`` owning its weights.

    Subclassed per library (``LayerLibrary.Layer``); construct it as
    ``Layer(num_etypes, num_ntypes, **hypers)``. Every ``param`` of the model
    becomes an ``nn.Parameter`` attribute of the same name (float32, CPU;
    move it with ``.to(device)``), shaped by :meth:`LayerLibrary.shapes`.
    :meth:`reset_parameters` initialises them from the per-row shape (the
    shape without the etype/ntype row dimension):

    * rank >= 2: Glorot / Xavier uniform with fan_in, fan_out = the last two
      dims, i.e. ``U(-a, a)``, ``a = sqrt(6 / (fan_in + fan_out))``;
    * rank <= 1 whose name contains ``bias``: zeros;
    * other rank <= 1 (attention priors, gates such as ``mu``, ``skip``,
      ``p_rel``): ones.

    ``forward(graph, *inputs, **named_inputs)`` takes the model's inputs in
    declaration order (or by name) and returns its output, or a tuple when
    the model has several.
    """

    library = None  # the LayerLibrary, set on each subclass

    def __init__(self, num_etypes: int, num_ntypes: int, **hypers):
        super().__init__()
        if self.library is None:
            raise TypeError("HectorLayer is abstract: use "
                            "hector.load(...).Layer")
        lib = self.library
        self.num_etypes = _count(num_etypes, "num_etypes")
        self.num_ntypes = _count(num_ntypes, "num_ntypes")
        self.hypers = _check_hypers(lib, hypers)
        shapes = lib.shapes({"num_nodes": 0, "num_edges": 0,
                             "num_etypes": self.num_etypes,
                             "num_ntypes": self.num_ntypes,
                             "num_pairs": 0}, **self.hypers)
        for name in lib.params:
            rows = lib._decls[name][0]
            if rows not in ("etype_rows", "ntype_rows", "global"):
                raise ValueError(f"{lib.name}: param {name} has {rows}; a "
                                 "Layer owns only per-etype, per-ntype and "
                                 "global params (use LayerLibrary.run)")
            self.register_parameter(name, torch.nn.Parameter(
                torch.empty(shapes[name], dtype=torch.float32)))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initialises every parameter (see the class docstring)."""
        lib = self.library
        with torch.no_grad():
            for name in lib.params:
                p = getattr(self, name)
                rows = lib._decls[name][0]
                per_row = p.shape if rows == "global" else p.shape[1:]
                if len(per_row) >= 2:
                    bound = math.sqrt(6.0 / (per_row[-2] + per_row[-1]))
                    p.uniform_(-bound, bound)
                elif "bias" in name:
                    p.zero_()
                else:
                    p.fill_(1.0)

    def forward(self, graph, *inputs, **named_inputs):
        lib = self.library
        if not isinstance(graph, Graph):
            raise TypeError(f"graph: expected a hector.Graph, got "
                            f"{type(graph).__name__}")
        if (graph.num_etypes, graph.num_ntypes) != (self.num_etypes,
                                                    self.num_ntypes):
            raise ValueError(
                f"graph: has num_etypes={graph.num_etypes}, num_ntypes="
                f"{graph.num_ntypes}, but this {lib.name} layer was built "
                f"for num_etypes={self.num_etypes}, num_ntypes="
                f"{self.num_ntypes}")
        if len(inputs) > len(lib.inputs):
            raise TypeError(f"{lib.name}: forward takes {len(lib.inputs)} "
                            f"inputs ({', '.join(lib.inputs)}), got "
                            f"{len(inputs)}")
        values = dict(zip(lib.inputs, inputs))
        for key, value in named_inputs.items():
            if key not in lib.inputs:
                raise TypeError(f"{lib.name}: forward got an unknown input "
                                f"'{key}'; its inputs are: "
                                f"{', '.join(lib.inputs)}")
            if key in values:
                raise TypeError(f"{lib.name}: forward got input '{key}' "
                                "twice (by position and by name)")
            values[key] = value
        missing = [k for k in lib.inputs if k not in values]
        if missing:
            raise ValueError(f"{lib.name}: forward is missing input(s) "
                             f"{', '.join(missing)}")
        for name in lib.params:
            values[name] = getattr(self, name)
        outs = lib.run(graph, values, **self.hypers)
        result = tuple(outs[k] for k in lib.outputs)
        return result[0] if len(result) == 1 else result

    def extra_repr(self):
        hypers = ", ".join(f"{k}={v}" for k, v in self.hypers.items())
        return (f"num_etypes={self.num_etypes}, num_ntypes="
                f"{self.num_ntypes}" + (f", {hypers}" if hypers else ""))


def _count(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an int, got "
                        f"{type(value).__name__}")
    value = int(value)
    if value < 0:
        raise ValueError(f"{name}: must be non-negative, got {value}")
    return value


# --------------------------------------------------------------------------
# PyG graphs
# --------------------------------------------------------------------------


def from_pyg(data, device: Optional[Union[str, torch.device]] = None, *,
             num_etypes: Optional[int] = None,
             num_ntypes: Optional[int] = None) -> Graph:
    """A :class:`hector.Graph` from a torch_geometric ``HeteroData`` or
    ``Data`` (torch_geometric itself is not imported).

    * ``HeteroData``: flattened by :func:`hector.datasets.from_pyg`: node
      type t is ``data.node_types[t]`` and its nodes get the global ids
      ``offset[t] + local id`` in that order (so the layer's node input is
      ``torch.cat([data[t].x for t in data.node_types])``); edge type r is
      ``data.edge_types[r]``. Use :func:`hector.datasets.from_pyg` for the
      type names and offsets. `num_etypes` / `num_ntypes` must not be given.
    * ``Data`` (one node range, e.g. for RGCNConv): ``data.edge_index``,
      ``data.edge_type`` (all 0 when absent), ``data.node_type`` (all 0
      when absent) and ``data.num_nodes``; `num_etypes` / `num_ntypes`
      default as in :class:`hector.Graph`.

    `device` defaults to the device of the edge indices.
    """
    if hasattr(data, "node_types") and hasattr(data, "edge_types"):
        if num_etypes is not None or num_ntypes is not None:
            raise TypeError("from_pyg: num_etypes / num_ntypes come from a "
                            "HeteroData's metadata and cannot be given")
        from . import datasets
        flat = datasets.from_pyg(data, device)[0]
        return flat.as_graph()
    edge_index = getattr(data, "edge_index", None)
    if edge_index is None:
        raise TypeError("from_pyg: expected a torch_geometric HeteroData or "
                        f"Data with edge_index, got {type(data).__name__}")
    device = edge_index.device if device is None else torch.device(device)
    edge_index = edge_index.to(device)
    edge_type = getattr(data, "edge_type", None)
    if edge_type is None:
        edge_type = torch.zeros(edge_index.size(1), dtype=torch.int64,
                                device=device)
    node_type = getattr(data, "node_type", None)
    if node_type is not None:
        node_type = node_type.to(device)
    return Graph(edge_index, edge_type.to(device), node_type,
                 getattr(data, "num_nodes", None), num_etypes=num_etypes,
                 num_ntypes=num_ntypes)

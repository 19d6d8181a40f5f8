"""Runs a model with the IR interpreter (the numerical oracle)."""

import functools
import os
import subprocess
from collections.abc import Mapping

import torch

from ._ext import _REPO_ROOT, extension
from .graph import Graph

__all__ = ["interpret", "load_module"]


def _hectorc():
    """The hectorc binary: $HECTORC, else <repo>/build/bin/hectorc."""
    path = os.environ.get("HECTORC") or os.path.join(_REPO_ROOT, "build",
                                                     "bin", "hectorc")
    if not os.path.isfile(path):
        raise RuntimeError(
            f"model: compiling a .hgnn file needs hectorc, not found at "
            f"{path}; build it (cmake target hectorc) or set HECTORC")
    return path


@functools.lru_cache(maxsize=64)
def _compile_hgnn(path, mtime_ns, size, hectorc):
    del mtime_ns, size  # part of the cache key only
    proc = subprocess.run([hectorc, path, "--emit=inter-ir"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise ValueError(f"model: hectorc failed on {path}:\n"
                         f"{proc.stderr or proc.stdout}")
    return proc.stdout


@functools.lru_cache(maxsize=64)
def _parse(text, file):
    return extension().parse_module(text, file, True)


def load_module(model):
    """The verified IR module of `model`: a ``.hgnn`` path (compiled with
    hectorc), a printed-IR path, IR text, or an already loaded module.
    Raises ValueError with the diagnostics when it is not a valid model."""
    if isinstance(model, extension().Module):
        return model
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if not isinstance(model, str):
        raise TypeError("model: expected a .hgnn or .ir path or IR text, "
                        f"got {type(model).__name__}")
    if "{" in model or "\n" in model:
        return _parse(model, "<ir>")
    if not os.path.isfile(model):
        raise ValueError(f"model: no such file: {model}")
    path = os.path.abspath(model)
    if path.endswith(".hgnn"):
        st = os.stat(path)
        text = _compile_hgnn(path, st.st_mtime_ns, st.st_size, _hectorc())
    else:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    return _parse(text, path)


def _check_tensor_dict(arg, name, module, kind):
    """Checks a dict argument's types and names against the model."""
    if arg is None:
        arg = {}
    if not isinstance(arg, Mapping):
        raise TypeError(f"{name}: expected a dict of tensors, got "
                        f"{type(arg).__name__}")
    declared = {v["name"]: v for v in module.values()}
    wanted = [n for n, v in declared.items() if v["kind"] == kind]
    for key, value in arg.items():
        if not isinstance(key, str):
            raise TypeError(f"{name}: keys must be str, got "
                            f"{type(key).__name__}")
        if key not in wanted:
            what = (f" ({key} is a {declared[key]['kind']})"
                    if key in declared else "")
            raise ValueError(
                f"{name}['{key}']: model @{module.name} has no {kind} named "
                f"'{key}'{what}; its {kind}s are: {', '.join(wanted)}")
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"{name}['{key}']: expected a torch.Tensor, got "
                            f"{type(value).__name__}")
    for key in wanted:
        if key not in arg:
            v = declared[key]
            raise ValueError(f"{name}['{key}']: missing (model "
                             f"@{module.name} declares {kind} {key} : "
                             f"{v['space']}{v['shape']})")
    return dict(arg)


def _check_hypers(hypers, module):
    if hypers is None:
        return {}
    if not isinstance(hypers, Mapping):
        raise TypeError(f"hypers: expected a dict, got "
                        f"{type(hypers).__name__}")
    known = {h["name"]: h for h in module.hypers()}
    out = {}
    for key, value in hypers.items():
        if key not in known:
            raise ValueError(f"hypers['{key}']: model @{module.name} has no "
                             f"hyper-parameter named '{key}'")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"hypers['{key}']: expected a number, got "
                            f"{type(value).__name__}")
        if known[key]["type"] == "int" and float(value) != int(value):
            raise ValueError(f"hypers['{key}']: expected an integer, got "
                             f"{value}")
        out[key] = float(value)
    return out


def interpret(model, graph, inputs, params, hypers=None, *,
              return_all=False):
    """Runs `model` on `graph` with the IR interpreter.

    Args:
        model: a ``.hgnn`` path, a printed-IR (``.ir``) path, IR text, or a
            module from :func:`load_module`.
        graph: a :class:`hector.Graph`.
        inputs: ``{name: tensor}`` for every ``input`` of the model.
        params: ``{name: tensor}`` for every ``param`` (weight).
        hypers: optional ``{name: number}`` overriding hyper-parameters.
        return_all: return every value of the program, not only outputs.

    Each tensor must be floating point (one dtype for all), on the graph's
    device, and shaped ``[rows, *shape]`` (rows: the graph's nodes, edges,
    edge types, ...) or ``[*shape]`` for a global value. Returns
    ``{output name: tensor}``; gradients flow back to inputs and params.
    """
    module = load_module(model)
    if not isinstance(graph, Graph):
        raise TypeError(f"graph: expected a hector.Graph, got "
                        f"{type(graph).__name__}")
    inputs = _check_tensor_dict(inputs, "inputs", module, "input")
    params = _check_tensor_dict(params, "params", module, "param")
    hypers = _check_hypers(hypers, module)
    return extension().interpret(module, graph.cpp(), inputs, params,
                                 hypers, return_all)


def value_shapes(model, graph, hypers=None):
    """``{name: shape}`` of every value `model` declares, on `graph` with
    `hypers`: the shapes :func:`interpret` expects of inputs and params
    (``[rows, *shape]``, or ``[*shape]`` for a global value)."""
    module = load_module(model)
    if not isinstance(graph, Graph):
        raise TypeError(f"graph: expected a hector.Graph, got "
                        f"{type(graph).__name__}")
    return extension().value_shapes(module, graph.cpp(),
                                    _check_hypers(hypers, module))

"""Hector: a compiler and runtime for relational graph neural networks.

This package is the Python face of the runtime (runtime/ in the source
tree). It holds:

* :class:`Graph` -- a typed multigraph built from PyG-layout tensors, with
  every argument validated; :func:`from_pyg` builds one from PyG data;
* :func:`interpret` -- runs a model (a ``.hgnn`` file, a printed-IR file or
  IR text) on a graph with the IR interpreter, differentiably;
* :func:`load` -- a compiled layer (hectorc's output and its built library)
  as a :class:`LayerLibrary`, with an ``nn.Module`` (``.Layer``);
  ``hector.models`` -- the bundled ones (``hector.models.rgat``);
  :func:`compile` -- hectorc + CMake, then :func:`load`;
* ``hector.nn`` -- drop-in replacements of PyG's RGCNConv, RGATConv and
  HGTConv (same constructor, state_dict and outputs) on the generated
  kernels;
* ``hector.datasets`` (import it explicitly) -- synthetic benchmark graphs
  and loaders.

The compiled extension ``hector._C`` is loaded on first use, so the pure
Python parts import without a build. docs/python.md describes the API.
"""

from . import models, nn
from .compile import compile  # noqa: A001  (the function shadows the module)
from .graph import Graph
from .interpret import interpret, load_module, value_shapes
from .layers import HectorLayer, LayerLibrary, from_pyg, load

__all__ = ["Graph", "HectorLayer", "LayerLibrary", "compile", "from_pyg",
           "interpret", "load", "load_module", "models", "nn", "value_shapes"]

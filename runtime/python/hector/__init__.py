"""Hector: a compiler and runtime for relational graph neural networks.

This package is the Python face of the runtime (runtime/ in the source
tree). It holds:

* :class:`Graph` -- a typed multigraph built from PyG-layout tensors, with
  every argument validated;
* :func:`interpret` -- runs a model (a ``.hgnn`` file, a printed-IR file or
  IR text) on a graph with the IR interpreter, differentiably;
* ``hector.datasets`` (import it explicitly) -- synthetic benchmark graphs
  and loaders.

The compiled extension ``hector._C`` is loaded on first use, so the pure
Python parts import without a build.
"""

from .graph import Graph
from .interpret import interpret, load_module, value_shapes

__all__ = ["Graph", "interpret", "load_module", "value_shapes"]

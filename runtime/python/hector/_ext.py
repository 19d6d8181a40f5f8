"""Loads the compiled extension ``hector._C`` on first use.

An installed package carries ``_C`` next to this file. In a source checkout
it is taken from the CMake build tree instead: ``$HECTOR_BUILD_DIR/lib/_C*.so``
(``HECTOR_BUILD_DIR`` defaults to ``<repo>/build``). Loading is deferred to
the first call of :func:`extension` so that the pure-Python parts of the
package (``hector.Graph``'s validation, ``hector.datasets``) import on a
machine where the extension is not built.
"""

import glob
import importlib.util
import os
import sys

import torch  # noqa: F401  (registers the tensor type _C's bindings use)

_REPO_ROOT = os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def build_dir():
    """The CMake build directory the extension is loaded from."""
    return os.environ.get("HECTOR_BUILD_DIR",
                          os.path.join(_REPO_ROOT, "build"))


_EXT = None


def extension():
    """The ``hector._C`` module (loaded once)."""
    global _EXT
    if _EXT is None:
        _EXT = _load()
    return _EXT


def _load():
    try:
        from . import _C as ext  # installed layout
        return ext
    except ImportError:
        pass
    pattern = os.path.join(build_dir(), "lib", "_C*.so")
    candidates = sorted(glob.glob(pattern))
    if not candidates:
        raise ImportError(
            "hector: the compiled extension _C was not found (looked for "
            f"{pattern}); build it with cmake (target hector_C) or set "
            "HECTOR_BUILD_DIR to the build directory")
    spec = importlib.util.spec_from_file_location("hector._C", candidates[0])
    ext = importlib.util.module_from_spec(spec)
    sys.modules["hector._C"] = ext
    spec.loader.exec_module(ext)
    return ext

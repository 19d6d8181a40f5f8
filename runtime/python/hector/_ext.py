"""Where the compiled parts of the package are, and loading ``hector._C``.

Two layouts:

* **installed** (``pip install <repo>``, see setup.py): ``_C*.so`` sits next
  to this file, and every bundled model is in ``_bundled/<model>/``
  (``layer.json`` and ``libhector_<model>.so``);
* **source checkout**: ``_C`` is taken from the CMake build tree,
  ``$HECTOR_BUILD_DIR/lib/_C*.so`` (``HECTOR_BUILD_DIR`` defaults to
  ``<repo>/build``), and the bundled models are ``<repo>/generated/<model>/``
  with their libraries in ``$HECTOR_BUILD_DIR/lib``.

The installed locations are looked at first. Loading ``_C`` is deferred to
the first call of :func:`extension` so that the pure-Python parts of the
package (``hector.Graph``'s validation, ``hector.datasets``) import on a
machine where the extension is not built.
"""

import glob
import importlib.util
import os
import sys

import torch  # noqa: F401  (registers the tensor type _C's bindings use)

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_REPO_ROOT = os.path.abspath(os.path.join(PACKAGE_DIR, "..", "..", ".."))


def build_dir():
    """The CMake build directory of a source checkout."""
    return os.environ.get("HECTOR_BUILD_DIR",
                          os.path.join(_REPO_ROOT, "build"))


def installed_bundled_dir():
    """``<package>/_bundled``: the bundled models of an installed package."""
    return os.path.join(PACKAGE_DIR, "_bundled")


def source_bundled_dir():
    """``<repo>/generated``: the bundled models of a source checkout."""
    return os.path.join(_REPO_ROOT, "generated")


def bundled_model_dirs():
    """``{model: directory holding its layer.json}`` for every bundled model,
    from the installed package when it has any, else from the checkout."""
    for root in (installed_bundled_dir(), source_bundled_dir()):
        found = {}
        if os.path.isdir(root):
            for name in sorted(os.listdir(root)):
                d = os.path.join(root, name)
                if os.path.isfile(os.path.join(d, "layer.json")):
                    found[name] = d
        if found:
            return found
    return {}


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
            f"{os.path.join(PACKAGE_DIR, '_C*.so')} and {pattern}); build it "
            "with cmake (target hector_C) or set HECTOR_BUILD_DIR to the "
            "build directory")
    spec = importlib.util.spec_from_file_location("hector._C", candidates[0])
    ext = importlib.util.module_from_spec(spec)
    sys.modules["hector._C"] = ext
    spec.loader.exec_module(ext)
    return ext

"""The bundled models: hectorc's output for models/<name>.hgnn, built.

``hector.models.get("rgat")`` (or ``hector.models.rgat``) is the
:class:`hector.LayerLibrary` of the bundled ``rgat``: ``generated/rgat/``
with ``libhector_rgat.so`` from the main build in a source checkout, or
``hector/_bundled/rgat/`` in an installed package (looked at first).
Attributes are resolved lazily: importing this module loads no library.
"""

from typing import TYPE_CHECKING, List

from . import _ext

if TYPE_CHECKING:
    from .layers import LayerLibrary

__all__ = ["get", "names"]


def names() -> List[str]:
    """The bundled models' names, sorted (``['hgt', 'hgt_pyg', 'rgat',
    ...]``)."""
    return list(_ext.bundled_model_dirs())


def get(name: str) -> "LayerLibrary":
    """The :class:`hector.LayerLibrary` of bundled model `name`; ValueError
    listing the bundled models when there is none of that name."""
    dirs = _ext.bundled_model_dirs()
    if name not in dirs:
        raise ValueError(f"hector.models: no bundled model {name!r}; the "
                         f"bundled models are: {', '.join(dirs) or 'none'}")
    from .layers import load
    return load(dirs[name])


def __getattr__(name):
    if not name.startswith("_") and name in _ext.bundled_model_dirs():
        return get(name)
    raise AttributeError(f"module 'hector.models' has no attribute {name!r}"
                         f" (bundled models: {', '.join(names())})")


def __dir__():
    return sorted(set(globals()) | set(names()))

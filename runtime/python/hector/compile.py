"""hector.compile: a .hgnn model to a loaded layer library.

Runs hectorc (``$HECTORC``, else ``<repo>/build/bin/hectorc``, as
:func:`hector.interpret` finds it) to write the generated sources into
``out_dir``, then configures and builds ``out_dir`` with CMake against the
Hector checkout (the generated CMakeLists.txt is standalone given
``HECTOR_SOURCE_DIR``), and returns :func:`hector.load` of ``out_dir``.
"""

import json
import os
import shutil
import subprocess
import sys
from typing import Optional, Union

from . import _ext
from .interpret import _hectorc
from .layers import LayerLibrary, load

__all__ = ["compile"]

_TAIL_CHARS = 4000


def _tail(proc):
    # Compilers behind ninja report on stdout; hectorc and cmake on stderr.
    text = (proc.stderr or "").strip()
    if proc.stdout and proc.stdout.strip():
        text = (text + "\n" + proc.stdout.strip()).strip()
    return text[-_TAIL_CHARS:]


def _run(cmd, what):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"hector.compile: {what} failed (exit "
                           f"{proc.returncode}): {' '.join(cmd)}\n"
                           f"{_tail(proc)}")
    return proc


def _torch_prefix():
    import torch.utils
    return torch.utils.cmake_prefix_path


def _source_dir():
    """The Hector checkout the build compiles against: $HECTOR_SOURCE_DIR,
    else the checkout this package is in."""
    path = os.environ.get("HECTOR_SOURCE_DIR") or _ext._REPO_ROOT
    if not os.path.isfile(os.path.join(path, "runtime", "CMakeLists.txt")):
        raise RuntimeError(
            f"hector.compile: building needs the Hector source checkout; "
            f"{path} is not one (set HECTOR_SOURCE_DIR)")
    return os.path.abspath(path)


def compile(model: Union[str, os.PathLike], out_dir: Union[str, os.PathLike],
            *, reorder: bool = True, compact: bool = True, fuse: bool = True,
            build: bool = True, cuda: Optional[bool] = None,
            jobs: Optional[int] = None) -> Optional[LayerLibrary]:
    """Compiles `model` (a ``.hgnn`` file, or printed inter-op IR) into
    `out_dir` and returns its :class:`hector.LayerLibrary`.

    Args:
        reorder, compact, fuse: the optimisations; False passes
            ``-fno-reorder`` / ``-fno-compact`` / ``-fno-fuse`` to hectorc.
        build: configure and build ``out_dir/build`` with CMake (minutes)
            against the checkout ``$HECTOR_SOURCE_DIR`` (default: the one
            this package is in). With False only the sources are written;
            nothing is loaded and None is returned.
        cuda: ``HECTOR_WITH_CUDA`` for the build (None: CMake's default,
            on when it finds nvcc).
        jobs: parallel build jobs (default: the CPU count).

    Raises RuntimeError with the tail of the tool's output when hectorc or
    CMake fails. (A model named like a bundled one builds, but
    :func:`load` refuses to load both into one process: torch cannot hold
    two libraries of one op namespace.)
    """
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if isinstance(out_dir, os.PathLike):
        out_dir = os.fspath(out_dir)
    if not isinstance(model, str) or not os.path.isfile(model):
        raise FileNotFoundError(f"model: no such file: {model}")
    if not isinstance(out_dir, str):
        raise TypeError(f"out_dir: expected a path, got "
                        f"{type(out_dir).__name__}")
    out_dir = os.path.abspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)

    cmd = [_hectorc(), os.path.abspath(model), "-o", out_dir]
    for enabled, flag in ((reorder, "-fno-reorder"), (compact, "-fno-compact"),
                          (fuse, "-fno-fuse")):
        if not enabled:
            cmd.append(flag)
    _run(cmd, "hectorc")
    if not build:
        return None

    with open(os.path.join(out_dir, "layer.json"), encoding="utf-8") as f:
        info = json.load(f)
    source_dir = _source_dir()
    build_dir = os.path.join(out_dir, "build")
    os.makedirs(build_dir, exist_ok=True)
    configure = ["cmake", "-S", out_dir, "-B", build_dir,
                 f"-DHECTOR_SOURCE_DIR={source_dir}",
                 f"-DCMAKE_PREFIX_PATH={_torch_prefix()}",
                 f"-DPYTHON_EXECUTABLE={sys.executable}"]
    if cuda is not None:
        configure.append(f"-DHECTOR_WITH_CUDA={'ON' if cuda else 'OFF'}")
    # The generator of a configured build tree cannot change.
    if shutil.which("ninja") and not os.path.isfile(
            os.path.join(build_dir, "CMakeCache.txt")):
        configure += ["-G", "Ninja"]
    _run(configure, "CMake configure")
    jobs = jobs or os.cpu_count() or 1
    _run(["cmake", "--build", build_dir, "--target", info["library"],
          "-j", str(int(jobs))], "CMake build")
    return load(out_dir)

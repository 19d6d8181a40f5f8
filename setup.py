"""Packaging: ``pip install <repo>`` installs the ``hector`` Python package.

The package is runtime/python/hector plus prebuilt artifacts of the CMake
build, copied in by the build step (``build_py``):

* ``$HECTOR_BUILD_DIR/lib/_C<ext suffix>`` -> ``hector/_C<ext suffix>``
  (the pybind11 extension);
* ``$HECTOR_BUILD_DIR/lib/libhector_<m>.so`` and ``generated/<m>/layer.json``
  -> ``hector/_bundled/<m>/`` for every bundled model ``generated/<m>/``.

``HECTOR_BUILD_DIR`` defaults to ``<repo>/build``; a relative one is taken
from the repository root. When an artifact is missing, the build step first
runs the CMake build of the repository for the missing targets (configuring
``HECTOR_BUILD_DIR`` with ``-DHECTOR_BUILD_COMPILER=OFF
-DHECTOR_BUILD_TESTS=OFF`` when it is not configured yet; ``-j
$HECTOR_BUILD_JOBS``, default the CPU count). That build needs torch
importable by the building Python, so install with
``pip install --no-build-isolation <repo>``.

setuptools' own build directory is a temporary one, never ``<repo>/build``
(the CMake build tree).
"""

import atexit
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from setuptools import Distribution, find_packages, setup
from setuptools.command.build_py import build_py

REPO = os.path.dirname(os.path.abspath(__file__))
PACKAGE_ROOT = os.path.join("runtime", "python")


def _version():
    """The project version of the top-level CMakeLists.txt."""
    with open(os.path.join(REPO, "CMakeLists.txt"), encoding="utf-8") as f:
        match = re.search(r"project\(\s*Hector\s+VERSION\s+([0-9.]+)",
                          f.read())
    return match.group(1) if match else "0.0.0"


def _build_dir():
    return os.path.join(REPO, os.environ.get("HECTOR_BUILD_DIR", "build"))


def _bundled_models():
    """The bundled models: generated/<m>/ with a layer.json."""
    root = os.path.join(REPO, "generated")
    return sorted(m for m in os.listdir(root)
                  if os.path.isfile(os.path.join(root, m, "layer.json")))


def _extension_name():
    return "_C" + sysconfig.get_config_var("EXT_SUFFIX")


def _missing_targets(build_dir):
    """CMake targets whose artifact is not in build_dir/lib."""
    lib = os.path.join(build_dir, "lib")
    missing = []
    if not os.path.isfile(os.path.join(lib, _extension_name())):
        missing.append("hector_C")
    for m in _bundled_models():
        if not os.path.isfile(os.path.join(lib, f"libhector_{m}.so")):
            missing.append(f"hector_{m}")
    return missing


def _cmake_build(build_dir, targets):
    """Builds `targets` of the repository in build_dir (configured first
    when it is not yet)."""
    if not os.path.isfile(os.path.join(build_dir, "CMakeCache.txt")):
        configure = ["cmake", "-S", REPO, "-B", build_dir,
                     "-DHECTOR_BUILD_COMPILER=OFF", "-DHECTOR_BUILD_TESTS=OFF",
                     f"-DPYTHON_EXECUTABLE={sys.executable}"]
        try:
            import torch.utils
            configure.append(
                f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}")
        except ImportError:
            pass  # CMake may still find a system libtorch
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        subprocess.check_call(configure)
    jobs = os.environ.get("HECTOR_BUILD_JOBS") or str(os.cpu_count() or 1)
    subprocess.check_call(["cmake", "--build", build_dir, "--target",
                           *targets, "-j", jobs])


class BuildPyWithArtifacts(build_py):
    """build_py, then the prebuilt extension and bundled models copied into
    the package (built with CMake first when missing)."""

    def run(self):
        super().run()
        build_dir = _build_dir()
        missing = _missing_targets(build_dir)
        if missing:
            self.announce(f"hector: building {', '.join(missing)} in "
                          f"{build_dir}", level=2)
            _cmake_build(build_dir, missing)
            still = _missing_targets(build_dir)
            if still:
                raise RuntimeError(f"hector: the CMake build in {build_dir} "
                                   f"did not produce {', '.join(still)}")
        lib = os.path.join(build_dir, "lib")
        package = os.path.join(self.build_lib, "hector")
        for stale in glob.glob(os.path.join(package, "_C*.so")):
            os.remove(stale)
        self.copy_file(os.path.join(lib, _extension_name()),
                       os.path.join(package, _extension_name()))
        bundled = os.path.join(package, "_bundled")
        shutil.rmtree(bundled, ignore_errors=True)
        for m in _bundled_models():
            dest = os.path.join(bundled, m)
            self.mkpath(dest)
            self.copy_file(os.path.join(REPO, "generated", m, "layer.json"),
                           os.path.join(dest, "layer.json"))
            self.copy_file(os.path.join(lib, f"libhector_{m}.so"),
                           os.path.join(dest, f"libhector_{m}.so"))


class BinaryDistribution(Distribution):
    """The wheel holds compiled libraries: platform-specific."""

    def has_ext_modules(self):
        return True


# Never setuptools' default ./build: that is the CMake build tree.
_BUILD_BASE = tempfile.mkdtemp(prefix="hector-setup-")
atexit.register(shutil.rmtree, _BUILD_BASE, True)

setup(
    name="hector",
    version=_version(),
    description="Hector: a compiler and runtime for relational graph "
                "neural networks",
    python_requires=">=3.8",
    install_requires=["torch"],
    package_dir={"": PACKAGE_ROOT},
    packages=find_packages(PACKAGE_ROOT),
    cmdclass={"build_py": BuildPyWithArtifacts},
    distclass=BinaryDistribution,
    zip_safe=False,
    options={"build": {"build_base": _BUILD_BASE},
             "egg_info": {"egg_base": _BUILD_BASE}},
)

"""`pip install <repo>` (setup.py): the installed package carries the
extension and the bundled models, and works without the source tree.

The build step copies the artifacts of the build directory this test run
uses (hector._ext.build_dir(), i.e. $HECTOR_BUILD_DIR), so it builds
nothing. The installed package is then imported in a fresh interpreter
with only the install directory on PYTHONPATH, from another directory,
without HECTOR_BUILD_DIR.
"""

import glob
import json
import os
import subprocess
import sys
import textwrap

import pytest

from hector import _ext
from conftest import REPO_ROOT

CHECK = textwrap.dedent("""
    import json, sys
    import torch
    import hector
    g = hector.Graph(torch.tensor([[0, 1, 2, 3, 3], [1, 2, 3, 0, 1]]),
                     torch.tensor([0, 1, 1, 2, 0]),
                     torch.tensor([0, 0, 1, 1]))
    torch.manual_seed(0)
    layer = hector.models.rgcn.Layer(g.num_etypes, g.num_ntypes, in_dim=4,
                                     out_dim=3)
    x = torch.randn(4, 4, requires_grad=True)
    h = layer(g, x)
    h.sum().backward()
    expected = hector.interpret(
        sys.argv[1], g, {"x": x.detach().double()},
        {k: v.detach().double() for k, v in layer.named_parameters()},
        {"in_dim": 4, "out_dim": 3})["h"]
    print(json.dumps({
        "hector": hector.__file__,
        "C": hector._ext.extension().__file__,
        "models": hector.models.names(),
        "library": hector.models.rgcn.library_path,
        "shape": list(h.shape),
        "err": ((h.double() - expected).norm() / expected.norm()).item(),
        "grads": all(p.grad is not None for p in layer.parameters()),
    }))
""")


def pip_available():
    return subprocess.run([sys.executable, "-m", "pip", "--version"],
                          capture_output=True).returncode == 0


@pytest.mark.skipif(not pip_available(),
                    reason=f"pip is not available for {sys.executable}")
def test_pip_install_into_a_target_directory(tmp_path):
    build = os.path.abspath(_ext.build_dir())
    if not glob.glob(os.path.join(build, "lib", "_C*.so")):
        pytest.skip(f"no built extension in {build}/lib")
    target = tmp_path / "site"
    env = dict(os.environ, HECTOR_BUILD_DIR=build,
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps",
         "--no-build-isolation", "--no-cache-dir", "--target", str(target),
         REPO_ROOT],
        env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    package = target / "hector"
    assert glob.glob(str(package / "_C*.so"))
    models = sorted(m for m in os.listdir(os.path.join(REPO_ROOT,
                                                       "generated"))
                    if os.path.isfile(os.path.join(REPO_ROOT, "generated", m,
                                                   "layer.json")))
    for m in models:
        assert (package / "_bundled" / m / f"libhector_{m}.so").is_file(), m
        assert (package / "_bundled" / m / "layer.json").is_file(), m

    # A fresh interpreter that sees only the install (the IR file for the
    # interpreter check is passed by path: it is not installed).
    run_env = {k: v for k, v in os.environ.items()
               if not k.startswith("HECTOR_") and k != "PYTHONPATH"}
    run_env["PYTHONPATH"] = str(target)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    ir = os.path.join(REPO_ROOT, "generated", "rgcn", "rgcn.inter.ir")
    proc = subprocess.run([sys.executable, "-c", CHECK, ir],
                          cwd=elsewhere, env=run_env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["hector"].startswith(str(target) + os.sep)
    assert result["C"].startswith(str(package) + os.sep)
    assert result["library"] == str(package / "_bundled" / "rgcn" /
                                    "libhector_rgcn.so")
    assert result["models"] == models
    assert result["shape"] == [4, 3]
    assert result["err"] <= 1e-5
    assert result["grads"]

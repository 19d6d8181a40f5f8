"""The generated ops' launch graphs (templates/LaunchGraphCache.h: a CUDA
host function's launches replayed from a CUDA graph when a call repeats an
earlier call's arguments), against the same layer with
HECTOR_LAUNCH_GRAPHS=0: outputs, input and parameter gradients and the
parameters over several SGD steps for every bundled model, on graphs with
and without hub rows, split or not, and with the heavy and warp launches
side by side (not eligible: eager); bitwise in deterministic mode. A
profile shows that steady training steps do replay (cudaGraphLaunch) and
that the switch stops it. CUDA only."""

import pytest
import torch

from conftest import rel_err
from test_generated import HUB_MODES, MODELS, set_hub_mode
from test_replay import _graph, _layer, _x, train_against_reference

# Replayed and eager launches run the same kernels; only the order of
# floating-point atomics may differ between two runs.
TOL = 1e-5

# Selected by `-k cuda` with the other CUDA tests (pyproject.toml).
pytestmark = pytest.mark.cuda

cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                          reason="CUDA is not available")


class _Off:
    """`with off:` runs calls with HECTOR_LAUNCH_GRAPHS=0 (read per call)."""

    def __init__(self, monkeypatch):
        self.mp = monkeypatch

    def __enter__(self):
        self.mp.setenv("HECTOR_LAUNCH_GRAPHS", "0")

    def __exit__(self, *exc):
        self.mp.delenv("HECTOR_LAUNCH_GRAPHS")


@pytest.fixture
def off(monkeypatch):
    monkeypatch.delenv("HECTOR_LAUNCH_GRAPHS", raising=False)
    monkeypatch.delenv("HECTOR_CUDA_GRAPHS", raising=False)
    return _Off(monkeypatch)


@cuda
@pytest.mark.parametrize("hub_mode", list(HUB_MODES))
@pytest.mark.parametrize("model", MODELS)
def test_training_steps_match_eager_launches(model, hub_mode, off,
                                             monkeypatch):
    hubs = set_hub_mode(hub_mode, monkeypatch)
    train_against_reference(_graph(model, hubs), model, off, TOL)


@cuda
@pytest.mark.parametrize("hubs", [False, True], ids=["plain", "hubs"])
@pytest.mark.parametrize("model", MODELS)
def test_deterministic_training_is_bitwise(model, hubs, off, deterministic):
    train_against_reference(_graph(model, hubs), model, off, 0.0)


@cuda
@pytest.mark.parametrize("model", MODELS)
def test_inference_matches_eager_launches(model, off):
    g = _graph(model, hubs=True)
    layer = _layer(model, g)
    with torch.no_grad():
        for seed in range(5):
            x = _x(g, seed)
            got = layer(g, x)
            with off:
                want = layer(g, x)
            assert rel_err(got, want) <= TOL, f"{model}: call {seed}"


def _graph_launches(step, steps):
    """cudaGraphLaunch calls made by `steps` calls of step()."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU,
                             ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    return sum(e.count for e in prof.key_averages()
               if e.key == "cudaGraphLaunch")


@cuda
@pytest.mark.parametrize("model", ["rgat_pyg", "hgt_pyg", "rgcn_pyg"])
def test_steady_training_steps_replay(model, off):
    """A training loop's allocations repeat from step to step, so the
    forward and backward ops find their earlier calls' keys: after the
    first steps each makes one graph launch a step. With the switch off,
    none."""
    g = _graph(model, hubs=True)
    layer = _layer(model, g)
    x = _x(g, 0)

    def step():
        for p in layer.parameters():
            p.grad = None
        layer(g, x).square().mean().backward()

    for _ in range(3):
        step()
    assert _graph_launches(step, 4) >= 8
    with off:
        for _ in range(3):
            step()
        assert _graph_launches(step, 4) == 0

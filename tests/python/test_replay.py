"""hector.replay: the op recorded once in a CUDA graph and replayed on small
graphs (runtime/python/hector/replay.py, on with HECTOR_CUDA_GRAPHS=1),
against the same layer run eagerly (HECTOR_CUDA_GRAPHS=0): outputs and
gradients over several training steps (bitwise in deterministic mode), a
parameter changed in place, results kept across calls, a layer used twice
in one step, a backward through overwritten intermediates, an outer
capture, a capture that fails, and the switches. Every bundled model, on
graphs with and without hub rows, split or not (the split hubs take the
cooperative heavy launch and the stream-ordered workspace). CUDA only,
except the switches."""

import copy

import pytest
import torch

import hector
from hector import replay
from conftest import random_graph, random_typed_graph, rel_err, with_hubs
from test_generated import HUB_MODES, MODELS, set_hub_mode

# Replay and eager run the same kernels; only the order of floating-point
# atomics may differ between two runs (in deterministic mode nothing may).
TOL = 1e-5
DIM = 8

# Selected by `-k cuda` with the other CUDA tests (pyproject.toml).
pytestmark = pytest.mark.cuda

cuda = pytest.mark.skipif(not torch.cuda.is_available(),
                          reason="CUDA is not available")


def _graph(model, hubs=False, device="cuda"):
    g = random_typed_graph(seed=3) if "hgt" in model else \
        random_graph(seed=3)
    if hubs:
        g = with_hubs(g)
    return g.to(device).hector()


def _layer(model, g, heads=2, seed=0):
    lib = hector.load(model)
    hypers = {k: (heads if k == "heads" else DIM) if isinstance(v, int)
              else v for k, v in lib.hypers.items()}
    torch.manual_seed(seed)
    return lib.Layer(g.num_etypes, g.num_ntypes, **hypers).to(g.device)


def _x(g, seed, requires_grad=False):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(g.num_nodes, DIM, generator=gen).to(
        g.device).requires_grad_(requires_grad)


def _recordings(g):
    return [r for r in g.__dict__.get("_replays", {}).values()
            if r.forward is not None]


class _Eager:
    """Runs calls with HECTOR_CUDA_GRAPHS=0 (replay reads it per call)."""

    def __init__(self, monkeypatch):
        self.mp = monkeypatch

    def __enter__(self):
        self.mp.setenv("HECTOR_CUDA_GRAPHS", "0")

    def __exit__(self, *exc):
        self.mp.setenv("HECTOR_CUDA_GRAPHS", "1")


@pytest.fixture
def eager(monkeypatch):
    """Replay on (the test's calls), and `with eager:` off."""
    monkeypatch.setenv("HECTOR_CUDA_GRAPHS", "1")
    monkeypatch.delenv("HECTOR_CUDA_GRAPH_EDGES", raising=False)
    return _Eager(monkeypatch)


def _hub_graph(model, hub_mode, monkeypatch):
    """A graph of test_generated's hub mode: split hubs take a
    stream-ordered workspace; the heavy-first modes overlap the launches
    when run eagerly (under capture they are chained)."""
    return _graph(model, set_hub_mode(hub_mode, monkeypatch))


@cuda
@pytest.mark.parametrize("hub_mode", list(HUB_MODES))
@pytest.mark.parametrize("model", MODELS)
def test_inference_replay_matches_eager(model, hub_mode, eager,
                                        monkeypatch):
    g = _hub_graph(model, hub_mode, monkeypatch)
    layer = _layer(model, g)
    xs = [_x(g, seed) for seed in range(6)]
    with torch.no_grad():
        with eager:
            expected = [layer(g, x) for x in xs]
        assert not _recordings(g)
        actual = [layer(g, x) for x in xs]
    recs = _recordings(g)
    assert len(recs) == 1 and recs[0].backward is None
    # 2 eager calls, then the recording and 4 replays.
    assert recs[0].generation == 4
    # Every result is its own tensor: the later replays overwrote none.
    assert len({a.data_ptr() for a in actual}) == len(actual)
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert rel_err(a, e) <= TOL, f"{model}: call {i}"


@cuda
@pytest.mark.parametrize("hub_mode", list(HUB_MODES))
@pytest.mark.parametrize("model", MODELS)
def test_training_steps_match_eager(model, hub_mode, eager, monkeypatch):
    _train_and_compare(_hub_graph(model, hub_mode, monkeypatch), model,
                       eager, TOL)


@cuda
@pytest.mark.parametrize("hubs", [False, True], ids=["plain", "hubs"])
@pytest.mark.parametrize("model", MODELS)
def test_deterministic_training_is_bitwise_eager(model, hubs, eager,
                                                 deterministic):
    """Without atomics the replayed steps give the eager steps' bits."""
    _train_and_compare(_graph(model, hubs), model, eager, 0.0)


def _train_and_compare(g, model, eager, tol):
    """train_against_reference with the reference eager; then the one
    recording, with its backward, replayed from the third step on."""
    train_against_reference(g, model, eager, tol)
    recs = _recordings(g)
    assert len(recs) == 1 and recs[0].backward is not None
    assert recs[0].generation == 4


def train_against_reference(g, model, reference, tol):
    """Six SGD steps of the same layer, ours under the caller's settings and
    a copy under the context `reference` (entered around each of its
    calls): every step's output, the gradients of the input and of every
    parameter, and the parameters after the step."""
    ours = _layer(model, g)
    ref = copy.deepcopy(ours)
    opt_ours = torch.optim.SGD(ours.parameters(), lr=0.01)
    opt_ref = torch.optim.SGD(ref.parameters(), lr=0.01)
    for step in range(6):
        x_ours, x_ref = _x(g, step, True), _x(g, step, True)
        out = ours(g, x_ours)
        with reference:
            out_ref = ref(g, x_ref)
        assert rel_err(out, out_ref) <= tol, f"{model}: step {step}"
        probe = torch.linspace(-1, 1, out.numel(), device=g.device) \
            .view_as(out)
        (out * probe).sum().backward()
        with reference:
            (out_ref * probe).sum().backward()
        assert rel_err(x_ours.grad, x_ref.grad) <= tol, \
            f"{model}: step {step}: d/dx"
        for (name, p), q in zip(ours.named_parameters(), ref.parameters()):
            assert rel_err(p.grad, q.grad) <= tol, \
                f"{model}: step {step}: d/d{name}"
        opt_ours.step()
        opt_ref.step()
        opt_ours.zero_grad()
        opt_ref.zero_grad()
        for (name, p), q in zip(ours.named_parameters(), ref.parameters()):
            assert rel_err(p, q) <= tol, f"{model}: step {step}: {name}"
            if tol:
                # Rounding differences would grow over the steps: both
                # take the next step from the same parameters (in place,
                # so that the recording's addresses stay).
                with torch.no_grad():
                    q.copy_(p)


@cuda
def test_parameter_changed_in_place_or_replaced(eager):
    model = "rgat_pyg"
    g = _graph(model)
    layer = _layer(model, g)
    x = _x(g, 0)
    with torch.no_grad():
        for _ in range(3):
            layer(g, x)
        assert len(_recordings(g)) == 1
        layer.weight_.mul_(-2.0)
        got = layer(g, x)
        with eager:
            want = layer(g, x)
        assert rel_err(got, want) <= TOL
        # A new tensor is a new signature: eager twice, then recorded.
        layer.weight_ = torch.nn.Parameter(layer.weight_ * 0.5)
        outs = [layer(g, x) for _ in range(3)]
        with eager:
            want = layer(g, x)
    assert len(_recordings(g)) == 2
    for out in outs:
        assert rel_err(out, want) <= TOL


@cuda
@pytest.mark.parametrize("model", ["rgat_pyg", "hgt", "rgcn"])
def test_layer_used_twice_in_one_step(model, eager):
    """The second call finds the recording busy (its backward pending) and
    runs eagerly; the gradients are those of two eager calls."""
    g = _graph(model, hubs=True)
    ours = _layer(model, g, heads=1)
    ref = copy.deepcopy(ours)
    for step in range(4):
        x_ours, x_ref = _x(g, step, True), _x(g, step, True)
        out = ours(g, ours(g, x_ours))
        with eager:
            out_ref = ref(g, ref(g, x_ref))
        assert rel_err(out, out_ref) <= TOL
        out.square().sum().backward()
        with eager:
            out_ref.square().sum().backward()
        assert rel_err(x_ours.grad, x_ref.grad) <= TOL, f"step {step}"
        for (name, p), q in zip(ours.named_parameters(), ref.parameters()):
            assert rel_err(p.grad, q.grad) <= TOL, \
                f"step {step}: {name}"
            p.grad = q.grad = None
    assert len(_recordings(g)) == 1


def _recorded_for_training(model):
    """A layer whose training call is recorded: (graph, layer, x)."""
    g = _graph(model)
    layer = _layer(model, g)
    x = _x(g, 0, True)
    for _ in range(3):
        layer(g, x).sum().backward()
    return g, layer, x


@cuda
def test_backward_through_overwritten_replay_raises(eager):
    g, layer, x = _recorded_for_training("rgat_pyg")
    first = layer(g, x)
    first.sum().backward(retain_graph=True)
    layer(g, _x(g, 1, True)).sum().backward()
    with pytest.raises(RuntimeError, match="overwritten by a later call"):
        first.sum().backward()


@cuda
def test_dropped_output_frees_the_recording(eager):
    """A training call whose output is dropped without backward leaves the
    recording free for the next call (which replays, not runs eagerly)."""
    g, layer, x = _recorded_for_training("rgcn_pyg")
    (rec,) = _recordings(g)
    before = rec.generation
    out = layer(g, x)
    assert rec.busy()
    del out
    assert not rec.busy()
    layer(g, x).sum().backward()
    assert rec.generation == before + 2


@cuda
def test_double_backward_is_refused(eager):
    model = "rgcn_pyg"
    g = _graph(model)
    layer = _layer(model, g)
    x = _x(g, 0, True)
    for _ in range(2):
        layer(g, x)
    out = layer(g, x)
    (gx,) = torch.autograd.grad(out.square().sum(), x, create_graph=True)
    with pytest.raises(RuntimeError):
        gx.sum().backward()


@cuda
def test_inside_an_outer_capture_runs_eagerly(eager):
    """A caller's own CUDA graph records the op's kernels (the op is not
    replayed from inside a capture)."""
    model = "rgat_pyg"
    g = _graph(model, hubs=True)
    layer = _layer(model, g)
    x = _x(g, 0)
    with torch.no_grad():
        with eager:
            want = layer(g, x)
        layer(g, x)  # the graph's arrays and the kernels' lazy state
        outer = torch.cuda.CUDAGraph()
        with torch.cuda.graph(outer):
            got = layer(g, x)
        assert not _recordings(g)
        got.zero_()
        outer.replay()
    assert rel_err(got, want) <= TOL


@cuda
def test_failed_capture_warns_and_runs_eagerly(eager, monkeypatch):
    class Refused:
        def __init__(self):
            raise RuntimeError("capture refused for the test")

    model = "rgcn_pyg"
    g = _graph(model)
    layer = _layer(model, g)
    x = _x(g, 0)
    with torch.no_grad():
        with eager:
            want = layer(g, x)
        monkeypatch.setattr(torch.cuda, "CUDAGraph", Refused)
        layer(g, x)
        layer(g, x)
        with pytest.warns(RuntimeWarning, match="capture refused"):
            got = layer(g, x)
        got_again = layer(g, x)
    assert not _recordings(g)
    assert rel_err(got, want) <= TOL and rel_err(got_again, want) <= TOL


@cuda
def test_edge_threshold(eager, monkeypatch):
    model = "rgcn_pyg"
    g = _graph(model)
    layer = _layer(model, g)
    x = _x(g, 0)
    monkeypatch.setenv("HECTOR_CUDA_GRAPH_EDGES", str(g.num_edges - 1))
    with torch.no_grad():
        for _ in range(4):
            layer(g, x)
    assert not _recordings(g)
    monkeypatch.setenv("HECTOR_CUDA_GRAPH_EDGES", str(g.num_edges))
    with torch.no_grad():
        for _ in range(3):
            layer(g, x)
    assert len(_recordings(g)) == 1


def test_switches(monkeypatch):
    monkeypatch.delenv("HECTOR_CUDA_GRAPHS", raising=False)
    monkeypatch.delenv("HECTOR_CUDA_GRAPH_EDGES", raising=False)
    assert not replay.enabled() and replay.max_edges() == 2**20
    monkeypatch.setenv("HECTOR_CUDA_GRAPHS", "1")
    assert replay.enabled()
    monkeypatch.setenv("HECTOR_CUDA_GRAPHS", "0")
    assert not replay.enabled()
    monkeypatch.setenv("HECTOR_CUDA_GRAPH_EDGES", "1000")
    assert replay.max_edges() == 1000
    monkeypatch.setenv("HECTOR_CUDA_GRAPH_EDGES", "many")
    with pytest.raises(ValueError, match="HECTOR_CUDA_GRAPH_EDGES"):
        replay.max_edges()


def test_cpu_graphs_run_eagerly(eager):
    model = "rgcn_pyg"
    g = _graph(model, device="cpu")
    layer = _layer(model, g)
    x = _x(g, 0)
    with torch.no_grad():
        outs = [layer(g, x) for _ in range(4)]
    assert "_replays" not in g.__dict__
    # Equal up to the order of the CPU kernels' atomic adds, which the
    # OpenMP threads' timing sets (on a 16-core host the calls' bits
    # differed; on 2 cores they had not).
    assert all(rel_err(o, outs[0]) <= TOL for o in outs)

"""hector.interpret validates the model and every argument, naming it."""

import os

import pytest
import torch

import hector
from conftest import TEST_MODELS

RGCN = os.path.join(TEST_MODELS, "rgcn.ir")


@pytest.fixture
def case():
    g = hector.Graph(torch.tensor([[0, 1, 2], [1, 2, 0]]),
                     torch.tensor([0, 1, 0]))
    inputs = {"x": torch.randn(3, 5, dtype=torch.float64)}
    params = {"W": torch.randn(2, 5, 6, dtype=torch.float64),
              "W_self": torch.randn(5, 6, dtype=torch.float64),
              "bias": torch.randn(6, dtype=torch.float64)}
    return g, inputs, params


def test_valid_call_returns_outputs(case):
    g, inputs, params = case
    out = hector.interpret(RGCN, g, inputs, params)
    assert list(out) == ["h"]
    assert out["h"].shape == (3, 6) and out["h"].dtype == torch.float64
    # Node 0 has one in-edge (from 2, relation 0): h0 = x2 W0 + x0 Ws + b.
    x = inputs["x"]
    expected = x[2] @ params["W"][0] + x[0] @ params["W_self"] + \
        params["bias"]
    assert torch.allclose(out["h"][0], expected, rtol=1e-12, atol=1e-12)


def test_ir_text_and_path_and_module_agree(case):
    g, inputs, params = case
    with open(RGCN) as f:
        text = f.read()
    a = hector.interpret(RGCN, g, inputs, params)["h"]
    b = hector.interpret(text, g, inputs, params)["h"]
    c = hector.interpret(hector.load_module(RGCN), g, inputs, params)["h"]
    assert torch.equal(a, b) and torch.equal(a, c)


def test_return_all_values(case):
    g, inputs, params = case
    out = hector.interpret(RGCN, g, inputs, params, return_all=True)
    assert {"x", "W", "norm", "msg", "agg", "h", "rel_in_degree"} <= set(out)
    assert out["rel_in_degree"].tolist() == [1, 1, 1]


@pytest.mark.parametrize("mutate,exc,needle", [
    (lambda i, p: p.pop("W"), ValueError, "params['W']: missing"),
    (lambda i, p: i.pop("x"), ValueError, "inputs['x']: missing"),
    (lambda i, p: i.update(y=torch.zeros(3)), ValueError,
     "inputs['y']: model @rgcn has no input named 'y'"),
    (lambda i, p: i.update(W=p["W"]), ValueError,
     "inputs['W']: model @rgcn has no input named 'W' (W is a param)"),
    (lambda i, p: p.update(W=torch.zeros(2, 5, 5, dtype=torch.float64)),
     ValueError, "params['W']: expected shape [2, 5, 6]"),
    (lambda i, p: p.update(W_self=torch.zeros(6, 5, dtype=torch.float64)),
     ValueError, "params['W_self']: expected shape [5, 6], got [6, 5]"),
    (lambda i, p: i.update(x=torch.zeros(4, 5, dtype=torch.float64)),
     ValueError, "inputs['x']: expected shape [3, 5]"),
    (lambda i, p: i.update(x=torch.zeros(3, 5, dtype=torch.long)),
     TypeError, "inputs['x']: expected a floating-point tensor"),
    (lambda i, p: p.update(bias=torch.zeros(6, dtype=torch.float32)),
     TypeError, "params['bias']: dtype torch.float32 differs"),
    (lambda i, p: p.update(bias=[0.0] * 6), TypeError,
     "params['bias']: expected a torch.Tensor"),
    (lambda i, p: p.update(bias=torch.zeros(6, dtype=torch.float64,
                                            device="meta")),
     ValueError, "params['bias']: on meta but the graph is on cpu"),
], ids=["missing-param", "missing-input", "unknown-input",
        "param-as-input", "param-shape", "param-transposed", "input-rows",
        "int-dtype", "mixed-dtype", "not-a-tensor", "device"])
def test_bad_tensors(case, mutate, exc, needle):
    g, inputs, params = case
    mutate(inputs, params)
    with pytest.raises(exc) as info:
        hector.interpret(RGCN, g, inputs, params)
    assert type(info.value) is exc
    assert needle in str(info.value)


def test_bad_containers_and_hypers(case):
    g, inputs, params = case
    with pytest.raises(TypeError, match="inputs: expected a dict"):
        hector.interpret(RGCN, g, [inputs["x"]], params)
    with pytest.raises(TypeError, match="graph: expected a hector.Graph"):
        hector.interpret(RGCN, "graph", inputs, params)
    with pytest.raises(ValueError, match=r"hypers\['heads'\]"):
        hector.interpret(RGCN, g, inputs, params, {"heads": 2})
    with pytest.raises(ValueError, match=r"hypers\['in_dim'\]: expected an "
                                         "integer"):
        hector.interpret(RGCN, g, inputs, params, {"in_dim": 2.5})
    with pytest.raises(TypeError, match=r"hypers\['in_dim'\]"):
        hector.interpret(RGCN, g, inputs, params, {"in_dim": "5"})
    # A valid override changes the expected shapes.
    with pytest.raises(ValueError, match=r"inputs\['x'\]: expected shape "
                                         r"\[3, 4\]"):
        hector.interpret(RGCN, g, inputs, params, {"in_dim": 4})


def test_bad_models(case, tmp_path):
    g, inputs, params = case
    with pytest.raises(ValueError, match="model: no such file"):
        hector.interpret(str(tmp_path / "missing.ir"), g, inputs, params)
    with pytest.raises(TypeError, match="model"):
        hector.interpret(42, g, inputs, params)
    # Syntax error: the diagnostics carry file:line:col.
    with pytest.raises(ValueError, match=r"<ir>:1:\d+: error"):
        hector.interpret("module @m { hyper }", g, inputs, params)
    # Parses but does not verify (h is never written).
    bad = tmp_path / "bad.ir"
    bad.write_text("module @m {\n  input x : node[3]\n"
                   "  output h : node[3]\n}\n")
    with pytest.raises(ValueError, match="bad.ir"):
        hector.interpret(str(bad), g, inputs, params)


def test_hgnn_errors_carry_hectorc_diagnostics(case, tmp_path, monkeypatch):
    g, inputs, params = case
    src = tmp_path / "broken.hgnn"
    src.write_text("model broken {\n  input x : node[4]\n  output h : "
                   "node[4]\n  for n in g.nodes() { n.h = nope(n.x) }\n}\n")
    fake = tmp_path / "hectorc"
    fake.write_text("#!/bin/sh\necho \"$1:4:30: error: unknown function "
                    "'nope'\" >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("HECTORC", str(fake))
    with pytest.raises(ValueError, match="unknown function 'nope'"):
        hector.interpret(str(src), g, inputs, params)
    monkeypatch.setenv("HECTORC", str(tmp_path / "no-such-hectorc"))
    with pytest.raises(RuntimeError, match="hectorc"):
        hector.interpret(str(src), g, inputs, params)

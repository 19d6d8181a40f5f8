"""Deterministic mode (issue 10): under torch.use_deterministic_algorithms
(True) the generated ops use no float atomics (the GEMMs and traversals
that would add with them add in a fixed order), so repeated runs give
bitwise identical outputs and gradients, on the CPU and the GPU.

Each bundled model runs forward and backward (the gradient of every input
and param, through the generated backward kernels) three times in
deterministic mode on a graph with many edges per node (so that atomic
adds collide), and the results must be the same bits; they must also agree
with the default (atomic) mode to rounding.
"""

import pytest
import torch

from conftest import random_graph, random_typed_graph, rel_err, with_hubs
from test_generated import (MODELS, hypers_for, layer_info, make_values,
                            run_generated)


def dense_graph(model, device):
    """Many edges per node: contributions to one row collide; two hubs
    above the heavy-row limit (the GPU's block-per-row launches)."""
    if "hgt" in model:
        return with_hubs(random_typed_graph(nodes_per_type=(40, 30, 20),
                                            edges_per_rel=600, seed=5,
                                            device=device))
    return with_hubs(random_graph(num_nodes=80, num_edges=3000, num_etypes=5,
                                  seed=5, device=device))


def forward_backward(model, g, values, hypers):
    """Outputs and the gradient of every argument, float32."""
    info = layer_info(model)
    leaves = {k: v.float().detach().requires_grad_() for k, v in
              values.items()}
    outs = run_generated(model, g, leaves, hypers)
    gen = torch.Generator().manual_seed(7)
    seeds = [torch.randn(o.shape, generator=gen).to(o.device) for o in outs]
    names = [a["name"] for a in info["arguments"]]
    grads = torch.autograd.grad(outs, [leaves[n] for n in names], seeds,
                                allow_unused=True)
    return [o.detach() for o in outs] + [g for g in grads if g is not None]


@pytest.mark.parametrize("model", MODELS)
def test_repeated_runs_are_bitwise_identical(model, device, deterministic):
    g = dense_graph(model, device)
    hypers = hypers_for(model, 2 if "rgcn" not in model else 1)
    _, values = make_values(model, g, hypers, device, seed=3)
    runs = [forward_backward(model, g, values, hypers) for _ in range(3)]
    assert len(runs[0]) > 1
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            assert torch.equal(a, b), model
    # The same sums as the default (atomic) mode, up to rounding.
    torch.use_deterministic_algorithms(False)
    free = forward_backward(model, g, values, hypers)
    for a, b in zip(runs[0], free):
        assert rel_err(a, b) < 1e-5, model


@pytest.mark.parametrize("model", MODELS)
def test_repeated_inference_runs_are_bitwise_identical(model, device,
                                                       deterministic):
    """Under no_grad the forward op runs the inference program where the
    layer has one (RGAT's weighted summed GEMM adds atomically otherwise):
    the same bits every run, and the default mode's sums to rounding."""
    g = dense_graph(model, device)
    hypers = hypers_for(model, 2 if "rgcn" not in model else 1)
    _, values = make_values(model, g, hypers, device, seed=4)
    values = {k: v.float() for k, v in values.items()}
    with torch.no_grad():
        runs = [run_generated(model, g, values, hypers) for _ in range(3)]
        for other in runs[1:]:
            for a, b in zip(runs[0], other):
                assert torch.equal(a, b), model
        torch.use_deterministic_algorithms(False)
        free = run_generated(model, g, values, hypers)
    for a, b in zip(runs[0], free):
        assert rel_err(a, b) < 1e-5, model

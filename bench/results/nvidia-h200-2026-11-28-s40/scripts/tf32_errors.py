"""Session 40 call d: the largest relative error, over the outputs and the
gradients of every argument, of each generated layer under allow_tf32 at
its declared hypers against the fp64 interpreter, with the weights drawn
at 0.5 and at Glorot's scale (tests/python/test_generated.py make_values).
Run from the repository root with tests/python on sys.path."""
import sys

import torch

sys.path.insert(0, "tests/python")
import test_generated as tg  # noqa: E402
from conftest import rel_err  # noqa: E402


def worst_error(model, glorot):
    device = torch.device("cuda")
    hypers = tg.declared_hypers(model)
    g = tg.graph_for(model, device, False)
    module, ref = tg.make_values(model, g, hypers, device, glorot=glorot)
    leaves64 = {k: v.clone().requires_grad_() for k, v in ref.items()}
    leaves32 = {k: v.float().requires_grad_() for k, v in ref.items()}
    expected = tg.run_interpreter(module, model, g, leaves64, hypers)
    actual = tg.run_generated(model, g, leaves32, hypers)
    worst = {"output": max(rel_err(a, e) for a, e in zip(actual, expected))}
    gen = torch.Generator().manual_seed(7)
    probes = [torch.randn(e.shape, generator=gen, dtype=torch.float64)
              .to(device) for e in expected]
    names = list(ref)
    g64 = torch.autograd.grad(sum((e * p).sum() for e, p in
                                  zip(expected, probes)),
                              [leaves64[n] for n in names], allow_unused=True)
    g32 = torch.autograd.grad(sum((a * p.float()).sum() for a, p in
                                  zip(actual, probes)),
                              [leaves32[n] for n in names], allow_unused=True)
    worst["gradient"] = max(
        rel_err(a if a is not None else torch.zeros_like(leaves32[n]),
                e if e is not None else torch.zeros_like(leaves64[n]))
        for n, e, a in zip(names, g64, g32))
    return worst


torch.backends.cuda.matmul.allow_tf32 = True
for model in tg.MODELS:
    for glorot in (False, True):
        w = worst_error(model, glorot)
        print(f"{model:9s} {'glorot' if glorot else 'plain 0.5':9s} "
              f"output {w['output']:.2e} gradient {w['gradient']:.2e}")

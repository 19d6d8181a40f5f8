"""Where a training step's host time goes, part by part:
hostparts.py DATASETS MODELS. Host enqueue time per call (GPU kept ahead
by a sleep kernel), best of 3 x 20 calls, for the hector-cr path:
  step          zero grads + LayerLibrary.run + mse_loss + backward
  fwd_grad      LayerLibrary.run with grad (autograd node built)
  fwd_nograd    LayerLibrary.run without grad
  op_fwd        ops.forward_kernels directly (no autograd)
  op_bwd        ops.backward_kernels directly on the saved values
  op_autograd   ops.forward + .backward(gout) (the op's own node only)
  mse           mse_loss fwd+bwd on a leaf of the output's shape
  ident         an empty python autograd.Function fwd+bwd (engine cost)
  empty15       15 torch.empty of the backward's temp sizes
  arrays        graph.kernel_arrays()
"""
import json, os, sys, time, torch
from hector.bench.cases import add_case_arguments, prepared_cases
from hector.bench import systems as S
import argparse

ds, models = sys.argv[1:3]
systems = sys.argv[3] if len(sys.argv) > 3 else "hector-cr"
tag = os.environ.get("TAG", "")
p = argparse.ArgumentParser(); add_case_arguments(p, ds.split(","), 1, 0)
args = p.parse_args(["--datasets", ds, "--models", models, "--systems", systems])


import os
DEV = os.environ.get("DEV", "cuda")
if DEV == "cpu":
    torch.cuda.synchronize = lambda: None
    torch.cuda._sleep = lambda n: None


def host(fn, n=20):
    best = 1e9
    for _ in range(3):
        torch.cuda.synchronize()
        torch.cuda._sleep(80_000_000)
        t = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t) / n)
        torch.cuda.synchronize()
    return round(best * 1e6, 1)


class Ident(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g


for d, m, s, prob, prepared in prepared_cases(args, torch.device(DEV)):
    fwd, params, target = prepared.forward, prepared.params, prob.target

    def step():
        for q in params: q.grad = None
        torch.nn.functional.mse_loss(fwd(), target).backward()

    def fwd_grad():
        for q in params: q.grad = None
        fwd()

    def fwd_nograd():
        with torch.no_grad(): fwd()

    if s != "hector-cr":
        fns = dict(step=step, fwd_grad=fwd_grad, fwd_nograd=fwd_nograd)
        for f in fns.values():
            for _ in range(5): f()
        out = {k: host(f) for k, f in fns.items()}
        print(json.dumps(dict(case=f"{d}-{m}-{s}", tag=tag, unit="us", **out)), flush=True)
        continue
    lib = S.variant_library(prob.model, "cr")
    graph = prob.hector_graph()
    from hector.layers import _check_hypers
    hypers = tuple(_check_hypers(lib, S._hypers(prob)).values())
    vals = {k: v.contiguous() for k, v in S._model_values(prob).items()}
    vals["x"] = prob.x
    argv = [vals[k] for k in lib._arguments]
    ops = lib.ops
    arrays = graph.kernel_arrays()
    def op_fwd():
        ops.forward_kernels(graph.kernel_arrays(), *argv, *hypers)

    res = ops.forward_kernels(arrays, *argv, *hypers)
    gout = torch.randn_like(res[0])
    import json as _j, os as _os
    meta = lib.info
    named = dict(vals)
    outs = [o["name"] for o in (meta or {}).get("outputs", [])]
    for i, nme in enumerate(outs):
        named["grad_" + nme] = gout if i == 0 else torch.zeros_like(res[i])
    for nme, t in zip((meta or {}).get("saved", []), res[len(outs):]):
        named[nme] = t
    bvals = [named[v["name"]] for v in meta["backward_values"]] if meta else []

    def op_bwd():
        ops.backward_kernels(graph.kernel_arrays(), bvals, *hypers)

    try:
        op_bwd()
        torch.cuda.synchronize()
        bwd_ok = True
    except Exception as e:  # the values' order may differ by model
        print("op_bwd skipped:", str(e)[:200], flush=True)
        bwd_ok = False

    def op_autograd():
        for q in params: q.grad = None
        ops.forward(graph.kernel_arrays(), *argv, *hypers)[0].backward(gout)

    leaf = torch.randn_like(res[0]).requires_grad_(True)
    tgt = torch.randn_like(res[0])

    def mse():
        leaf.grad = None
        torch.nn.functional.mse_loss(leaf, tgt).backward()

    xi = torch.randn(8, 8, device=DEV, requires_grad=True)

    def ident():
        xi.grad = None
        Ident.apply(xi).sum().backward()

    def empty15():
        for _ in range(15):
            torch.empty((1000, 64), device=DEV)

    def arr():
        graph.kernel_arrays()

    fns = dict(step=step, fwd_grad=fwd_grad, fwd_nograd=fwd_nograd, op_fwd=op_fwd,
               op_autograd=op_autograd, mse=mse, ident=ident, empty15=empty15,
               arrays=arr)
    if bwd_ok:
        fns["op_bwd"] = op_bwd
    for f in fns.values():
        for _ in range(5): f()
    torch.cuda.synchronize()
    out = {k: host(f) for k, f in fns.items()}
    print(json.dumps(dict(case=f"{d}-{m}-{s}", tag=tag, unit="us", **out)), flush=True)

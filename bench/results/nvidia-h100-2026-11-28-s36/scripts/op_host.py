"""Session 36 call b: the host time of one RGAT training step's parts,
each timed alone (median of 300 calls, the device synchronised between
calls and outside the clock): the hector.nn.RGATConv drop-in's call, the
generated op it makes (autograd node included), the op without autograd
(forward_kernels), the graph's kernel arrays, the backward through the
op, and a trivial aten op and backward for scale."""
import statistics
import sys
import time

import torch

import hector.replay as replay
from hector.bench.problem import make_problem
from hector.bench.systems import SYSTEMS
import hector.datasets as hds


def med_us(fn, n=300):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
        torch.cuda.synchronize()
    return 1e6 * statistics.median(ts)


def main(ds):
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True
    prob = make_problem(ds, "rgat", hds.synthetic(ds, device=dev), 64, 1, dev)
    prep = SYSTEMS["hector"].prepare(prob)
    seen = {}
    real = replay.run

    def spy(op, name, graph, args, hypers, order="given"):
        seen.update(op=op, graph=graph, args=args, hypers=hypers, order=order)
        return real(op, name, graph, args, hypers, order)
    replay.run = spy
    prep.forward()
    replay.run = real
    op, graph, args, hypers = (seen[k] for k in ("op", "graph", "args",
                                                 "hypers"))
    arrays = graph.kernel_arrays(seen["order"])
    ns = getattr(torch.ops, str(op).split(".")[0])
    out = {}
    out["drop-in forward (grad)"] = med_us(prep.forward)
    out["op forward (grad)"] = med_us(lambda: op(arrays, *args, *hypers))
    with torch.no_grad():
        out["op forward (no grad)"] = med_us(
            lambda: op(arrays, *args, *hypers))
    if hasattr(ns, "forward_kernels"):
        out["forward_kernels"] = med_us(
            lambda: ns.forward_kernels(arrays, *args, *hypers))
    out["kernel_arrays"] = med_us(lambda: graph.kernel_arrays(seen["order"]))
    h = prep.forward()
    g = torch.randn_like(h)

    def back():
        for p in prep.params:
            p.grad = None
        y = op(arrays, *args, *hypers)[0]
        torch.autograd.backward(y, g)
    out["op forward + backward"] = med_us(back)
    a = torch.randn(64, 64, device=dev, requires_grad=True)
    out["aten add"] = med_us(lambda: torch.add(a, a))

    def tb():
        a.grad = None
        torch.autograd.backward(a * 2.0, g[:64])
    out["trivial forward + backward"] = med_us(tb)
    print(f"{ds}: op {op} arrays {len(arrays)}")
    for k, v in out.items():
        print(f"  {k:30s} {v:8.1f} us")


if __name__ == "__main__":
    for ds in sys.argv[1:]:
        main(ds)

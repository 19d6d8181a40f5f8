"""Trains a two-layer Hector model for node classification on a synthetic
typed graph with the generated kernels, on the GPU when there is one, else on
the CPU.

The labels are planted so that a relational model can learn them: a random
one-layer RGCN "teacher" (models/rgcn.hgnn with random weights, run once by
the IR interpreter) maps random node features to class scores through the
typed neighbourhood, and each node's label is the teacher's arg-max. The
student is two layers of the chosen compiled layer and a linear classifier.
Its layers are `LayerLibrary.Layer` modules (docs/python.md): the forward
pass runs the generated forward kernels and autograd the generated backward
kernels.

    python examples/train.py --model rgat --epochs 20      # a bundled model
    python examples/train.py --library build/out/rgat      # hectorc -o output

The layer is a bundled model (`--model`, hector.models) or any directory
that hectorc wrote and whose library is built (`--library`, hector.load;
hector.compile does both). One process can hold one library per op
namespace, so the teacher uses the interpreter, not a compiled rgcn.

A seed fixes the graph, features, labels, split and initial weights. On the
CPU the whole run is then bit for bit the same; on CUDA the kernels' atomic
additions may change the last bits from run to run.
"""

import argparse
import os
import time

import torch

import hector
from hector import datasets

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEACHER = os.path.join(REPO, "generated", "rgcn", "rgcn.inter.ir")


def plant_labels(graph, x, num_classes, seed):
    """The arg-max of a random one-layer RGCN over `x`, run by the
    interpreter (so it loads no compiled library)."""
    module = hector.load_module(TEACHER)
    hypers = {"in_dim": x.shape[1], "out_dim": num_classes}
    shapes = hector.value_shapes(module, graph, hypers)
    gen = torch.Generator().manual_seed(seed + 1)
    params = {v["name"]: torch.randn(shapes[v["name"]], generator=gen).to(
        x.device) for v in module.values() if v["kind"] == "param"}
    with torch.no_grad():
        out = hector.interpret(module, graph, {"x": x}, params, hypers)
    return out["h"].argmax(dim=1)


class Student(torch.nn.Module):
    """Two layers of `lib` with an activation (and a LayerNorm, see
    --norm) after each, then a linear classifier. A layer whose output width
    is tied to its input width (hgt: out_dim = in_dim) gets a linear
    projection of the features to `hidden` in front."""

    def __init__(self, lib, graph, features, hidden, heads, classes, norm):
        super().__init__()
        self.graph = graph
        given = {"heads": heads} if "heads" in lib.hypers else {}
        if "out_dim" in lib.hypers:
            self.project = None
            dims = [features, hidden]
        else:
            self.project = torch.nn.Linear(features, hidden)
            dims = [hidden, hidden]
        self.layers = torch.nn.ModuleList()
        for in_dim in dims:
            hypers = dict(given)
            if "in_dim" in lib.hypers:
                hypers["in_dim"] = in_dim
            if "out_dim" in lib.hypers:
                hypers["out_dim"] = hidden
            self.layers.append(lib.Layer(graph.num_etypes, graph.num_ntypes,
                                         **hypers))
        out = lib.shapes(graph, **self.layers[-1].hypers)[lib.outputs[0]]
        if out[1:] != (hidden,):
            raise ValueError(f"{lib.name}: its output {lib.outputs[0]} has "
                             f"per-node shape {list(out[1:])}, not "
                             f"[{hidden}] (--hidden)")
        self.norms = torch.nn.ModuleList(
            torch.nn.LayerNorm(hidden) if norm else torch.nn.Identity()
            for _ in self.layers)
        self.classifier = torch.nn.Linear(hidden, classes)

    def forward(self, x):
        h = x if self.project is None else self.project(x)
        for layer, norm in zip(self.layers, self.norms):
            h = torch.relu(norm(layer(self.graph, h)))
        return self.classifier(h)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--model", default=None,
                       help="a bundled model: rgcn, rgat or hgt "
                            "(default rgat)")
    which.add_argument("--library", default=None, metavar="DIR",
                       help="a hectorc output directory with its library "
                            "built (e.g. by hector.compile)")
    parser.add_argument("--dataset", default="mag",
                        help="a synthetic shape from hector.datasets")
    parser.add_argument("--scale", type=float, default=0.003)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--features", type=int, default=64,
                        help="width of the random node features")
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4,
                        help="attention heads (layers that have them)")
    parser.add_argument("--classes", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--norm", action=argparse.BooleanOptionalAction,
                        default=True,
                        help="LayerNorm after each layer (default on)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default=None,
                        help="cpu or cuda (default: cuda when available)")
    args = parser.parse_args(argv)
    if args.model is None and args.library is None:
        args.model = "rgat"
    return args


def load_library(args):
    if args.library is not None:
        return hector.load(args.library)
    return hector.models.get(args.model)


def train(args):
    """Trains as `args` say, printing one line per epoch and a summary;
    returns the last epoch's (loss, train accuracy, test accuracy)."""
    device = torch.device(args.device or
                          ("cuda" if torch.cuda.is_available() else "cpu"))
    lib = load_library(args)
    torch.manual_seed(args.seed)
    data = datasets.synthetic(args.dataset, seed=args.seed, device=device,
                              scale=args.scale)
    graph = data.as_graph()
    x = torch.randn(graph.num_nodes, args.features, device=device)
    labels = plant_labels(graph, x, args.classes, args.seed)
    train_mask = torch.rand(graph.num_nodes, device=device) < 0.8
    test_mask = ~train_mask

    torch.manual_seed(args.seed)
    model = Student(lib, graph, args.features, args.hidden, args.heads,
                    args.classes, args.norm).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    hypers = ", ".join(f"{k}={v}" for k, v in model.layers[0].hypers.items())
    print(f"layer {lib.name} ({hypers}) from {lib.library_path}")
    print(f"synthetic {args.dataset} (scale {args.scale}): {graph.num_nodes} "
          f"nodes, {graph.num_edges} edges, {graph.num_etypes} relations, "
          f"{graph.num_ntypes} node types; {args.classes} planted classes; "
          f"device {device}")
    times = []
    for epoch in range(1, args.epochs + 1):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        optimizer.zero_grad()
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits[train_mask],
                                                 labels[train_mask])
        loss.backward()
        optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        pred = logits.argmax(dim=1)
        train_acc = (pred[train_mask] == labels[train_mask]).float().mean()
        test_acc = (pred[test_mask] == labels[test_mask]).float().mean()
        print(f"epoch {epoch:3d}  loss {loss.item():.4f}  "
              f"train acc {train_acc.item():.3f}  test acc "
              f"{test_acc.item():.3f}  time {times[-1] * 1e3:.1f} ms")
    # The first epoch includes one-time setup (graph arrays, allocations).
    steady = times[1:] or times
    print(f"{lib.name}: {args.epochs} epochs, final loss {loss.item():.4f}, "
          f"train acc {train_acc.item():.3f}, test acc {test_acc.item():.3f}, "
          f"{sum(steady) / len(steady) * 1e3:.1f} ms/epoch"
          f"{' after the first' if len(times) > 1 else ''}")
    return loss.item(), train_acc.item(), test_acc.item()


if __name__ == "__main__":
    train(parse_args())

"""Trains a two-layer Hector model for node classification on a synthetic
typed graph, on the GPU when there is one, else on the CPU.

The labels are planted so that a relational model can learn them: a random
one-layer RGCN "teacher" (models/rgcn.hgnn with random weights) maps random
node features to class scores through the typed neighbourhood, and each
node's label is the teacher's arg-max. The student is two layers of the
chosen model (rgcn, rgat or hgt) and a linear classifier.

Until the kernel emitters land (issue 6), layers run on the IR interpreter,
which is differentiable through torch autograd.

    python examples/train.py --model models/rgat.hgnn --epochs 20
"""

import argparse
import os
import time

import torch

import hector
from hector import datasets

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class HectorLayer(torch.nn.Module):
    """One layer of a Hector model run by the interpreter, with its weights
    as torch Parameters shaped as the model declares them."""

    def __init__(self, model, graph, hypers):
        super().__init__()
        self.module = hector.load_module(model)
        self.hypers = hypers
        shapes = hector.value_shapes(self.module, graph, hypers)
        self.input_name = next(v["name"] for v in self.module.values()
                               if v["kind"] == "input")
        self.output_name = next(v["name"] for v in self.module.values()
                                if v["kind"] == "output")
        self.weights = torch.nn.ParameterDict()
        for v in self.module.values():
            if v["kind"] == "param":
                self.weights[v["name"]] = torch.nn.Parameter(
                    init_weight(v["name"], shapes[v["name"]], v["space"]))

    def forward(self, graph, x):
        out = hector.interpret(self.module, graph, {self.input_name: x},
                               dict(self.weights), self.hypers)
        return out[self.output_name]


def init_weight(name, shape, space):
    """Glorot-like for matrices (fan-in is the second-to-last axis of the
    per-row shape), small random for vectors, zero for biases and gates."""
    per_row = shape[1:] if space in ("etype", "ntype") else shape
    if len(per_row) >= 2:
        return torch.randn(shape) / per_row[-2] ** 0.5
    if name in ("bias", "skip") or name.endswith("_bias"):
        return torch.zeros(shape)
    if name == "mu":
        return torch.ones(shape)
    return torch.randn(shape) * 0.1


def model_path(name):
    """A bundled model name (rgcn, rgat, hgt) or a path to .hgnn / .ir."""
    if os.path.exists(name):
        return name
    generated = os.path.join(REPO, "generated", name, f"{name}.inter.ir")
    if os.path.exists(generated):
        return generated
    return os.path.join(REPO, "models", f"{name}.hgnn")


def plant_labels(graph, x, num_classes, seed):
    teacher = HectorLayer(model_path("rgcn"), graph,
                          {"in_dim": x.shape[1], "out_dim": num_classes})
    torch.manual_seed(seed + 1)
    with torch.no_grad():
        for p in teacher.parameters():
            p.copy_(torch.randn_like(p))
        teacher.to(x.device)
        return teacher(graph, x).argmax(dim=1)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="rgat",
                        help="rgcn, rgat, hgt, or a .hgnn / .ir path")
    parser.add_argument("--dataset", default="mag",
                        help="a synthetic shape from hector.datasets")
    parser.add_argument("--scale", type=float, default=0.003)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--classes", type=int, default=4)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default=None,
                        help="cpu or cuda (default: cuda when available)")
    return parser.parse_args(argv)


def train(args):
    """Trains as `args` say, printing one line per epoch; returns the last
    epoch's (loss, train accuracy, test accuracy)."""
    device = torch.device(args.device or
                          ("cuda" if torch.cuda.is_available() else "cpu"))
    torch.manual_seed(args.seed)
    data = datasets.synthetic(args.dataset, seed=args.seed, device=device,
                              scale=args.scale)
    graph = data.as_graph()
    x = torch.randn(graph.num_nodes, args.dim, device=device)
    labels = plant_labels(graph, x, args.classes, args.seed)
    train_mask = torch.rand(graph.num_nodes, device=device) < 0.8
    test_mask = ~train_mask

    model = model_path(args.model)
    # Derived hypers (hgt's out_dim = in_dim) are not in the module's list.
    names = {h["name"] for h in hector.load_module(model).hypers()}
    hypers = {k: args.dim for k in ("in_dim", "out_dim") if k in names}
    layers = torch.nn.ModuleList([HectorLayer(model, graph, hypers),
                                  HectorLayer(model, graph, hypers)]).to(device)
    classifier = torch.nn.Linear(args.dim, args.classes).to(device)
    params = list(layers.parameters()) + list(classifier.parameters())
    optimizer = torch.optim.Adam(params, lr=args.lr)

    print(f"model {os.path.relpath(model, REPO)} on synthetic {args.dataset} "
          f"(scale {args.scale}): {graph.num_nodes} nodes, {graph.num_edges} "
          f"edges, {graph.num_etypes} relations, {graph.num_ntypes} node "
          f"types; {args.classes} planted classes; device {device}")
    for epoch in range(1, args.epochs + 1):
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        optimizer.zero_grad()
        h = torch.relu(layers[0](graph, x))
        logits = classifier(torch.relu(layers[1](graph, h)))
        loss = torch.nn.functional.cross_entropy(logits[train_mask],
                                                 labels[train_mask])
        loss.backward()
        optimizer.step()
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - start
        pred = logits.argmax(dim=1)
        train_acc = (pred[train_mask] == labels[train_mask]).float().mean()
        test_acc = (pred[test_mask] == labels[test_mask]).float().mean()
        print(f"epoch {epoch:3d}  loss {loss.item():.4f}  "
              f"train acc {train_acc.item():.3f}  test acc "
              f"{test_acc.item():.3f}  time {seconds * 1e3:.1f} ms")
    return loss.item(), train_acc.item(), test_acc.item()


if __name__ == "__main__":
    train(parse_args())

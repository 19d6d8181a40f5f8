"""Session 24: training steps whose input features require grad (the case
accumulate-partials applies to), timed back to back as
hector.bench.throughput times them. argv: datasets models tag."""
import json, sys
import torch
from hector.bench.cases import prepared_cases
from hector.bench.runner import _step, matmul_tf32
from hector.bench.throughput import time_steps


class Args:
    pass


args = Args()
args.datasets = sys.argv[1].split(",")
args.models = sys.argv[2].split(",")
args.systems = ["hector"]
args.dim, args.heads, args.scale = 64, 1, 1.0
dev = torch.device("cuda")
for ds, model, name, prob, prepared in prepared_cases(args, dev, input_grad=True):
    with matmul_tf32(True):
        ms = time_steps(_step(prepared, prob, "training"), dev, 20, 5)
    assert prob.x.grad is not None and prob.x.grad.abs().sum() > 0
    prob.x.grad = None
    print(json.dumps({"tag": sys.argv[3], "case": f"{ds}-{model}-training-input-grad",
                      "system": name, "ms": ms}), flush=True)

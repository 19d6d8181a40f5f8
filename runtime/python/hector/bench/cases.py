"""The case selection shared by the per-case tools (hector.bench.profile,
hector.bench.throughput): the same options, and the cases prepared as the
harness prepares them, one system at a time."""

import torch

from .__main__ import _csv


def add_case_arguments(p, datasets, steps, warmup):
    """--datasets, --models, --systems, --modes, --dim, --heads, --scale,
    --steps, --warmup, --device and --tf32 on the argparse parser `p`, with
    the tool's own defaults for the datasets, steps and warm-up steps."""
    p.add_argument("--datasets", type=_csv, default=datasets)
    p.add_argument("--models", type=_csv, default=["rgcn", "rgat", "hgt"])
    p.add_argument("--systems", type=_csv, default=["hector"])
    p.add_argument("--modes", type=_csv, default=["inference", "training"])
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--heads", type=int, default=1)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--steps", type=int, default=steps)
    p.add_argument("--warmup", type=int, default=warmup)
    p.add_argument("--device", default=None)
    p.add_argument("--tf32", action="store_true",
                   help="let the matmuls use TF32 while the steps run "
                        "(torch.backends.cuda.matmul.allow_tf32, as the "
                        "harness's --tf32)")


def device_of(args):
    """--device, else the GPU when there is one."""
    return torch.device(args.device or
                        ("cuda" if torch.cuda.is_available() else "cpu"))


def check_systems(p, args):
    """An argparse error for an unknown --systems name."""
    from . import systems as S

    for name in args.systems:
        if name not in S.SYSTEMS:
            p.error(f"unknown system {name!r}")


def prepared_cases(args, device, input_grad=False, on_error=None):
    """Yields (dataset, model, system name, problem, prepared) for every
    selected case a system runs, prepared as the harness does; the next
    case is prepared only after the caller is done with this one. A system
    whose preparation raises is passed to on_error(dataset, model, name,
    exc) and left out (raised when on_error is None). With input_grad the
    input features require grad."""
    from .. import datasets as hds
    from . import systems as S
    from .problem import make_problem

    for ds in args.datasets:
        graph = hds.synthetic(ds, device=device, scale=args.scale)
        for model in args.models:
            prob = make_problem(ds, model, graph, args.dim, args.heads,
                                device)
            if input_grad:
                prob.x.requires_grad_(True)
            for name in args.systems:
                if model not in S.SYSTEMS[name].models:
                    continue
                try:
                    prepared = S.SYSTEMS[name].prepare(prob)
                except Exception as exc:  # noqa: BLE001
                    if on_error is None:
                        raise
                    on_error(ds, model, name, exc)
                    continue
                yield ds, model, name, prob, prepared
                for prm in prepared.params:
                    prm.grad = None
                del prepared
            del prob
        del graph

"""Command line of hector.bench (python -m hector.bench --help)."""

import argparse
import os
import sys



def _csv(s):
    return [x.strip() for x in s.split(",") if x.strip()]


def parse_args(argv=None):
    from .. import datasets as hds
    from .problem import MODELS
    from .runner import MIN_REPEATS, MODES
    from .systems import SYSTEMS

    p = argparse.ArgumentParser(
        prog="python -m hector.bench",
        description="Benchmark Hector against PyG and plain-PyTorch "
                    "baselines on synthetic heterographs.")
    p.add_argument("--datasets", type=_csv, default=hds.names(),
                   help=f"comma-separated (default all: "
                        f"{','.join(hds.names())})")
    p.add_argument("--models", type=_csv, default=list(MODELS),
                   help="comma-separated subset of rgcn,rgat,hgt")
    p.add_argument("--modes", type=_csv, default=list(MODES),
                   help="comma-separated subset of inference,training")
    p.add_argument("--systems", type=_csv, default=None,
                   help="comma-separated system names (default all; see "
                        "--list-systems)")
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--heads", type=int, default=1)
    p.add_argument("--scale", type=float, default=1.0,
                   help="scale node and edge counts (e.g. 0.01 for a CPU "
                        "smoke run)")
    p.add_argument("--device", default=None,
                   help="default: cuda if available, else cpu")
    p.add_argument("--repeats", type=int, default=MIN_REPEATS,
                   help=f"timed runs per case (>= {MIN_REPEATS}); the "
                        "median is reported")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--case-timeout", type=float, default=None,
                   help="seconds: a system whose single step takes longer "
                        "is recorded as 'timeout' for that case instead of "
                        "being timed (default: no limit)")
    p.add_argument("--prepare-timeout", type=float, default=None,
                   help="seconds: a system whose preparation (torch.compile's "
                        "compilation included) or first step of a mode "
                        "takes longer is recorded as 'timeout' for those "
                        "cases and the run goes on (default: no limit)")
    p.add_argument("--out", default=None,
                   help="output folder (default "
                        "bench/results/<gpu-or-cpu>-<date>/)")
    p.add_argument("--skip-done", type=_csv, default=[],
                   help="comma-separated results.jsonl files or progress "
                        "logs of earlier runs: the cases they recorded are "
                        "not run again (to continue a run cut by a time "
                        "limit; join the runs with hector.bench.merge)")
    p.add_argument("--tf32", action="store_true",
                   help="let every system's matmuls use TF32 "
                        "(torch.backends.cuda.matmul.allow_tf32: PyG's "
                        "cuBLAS calls and Hector's tensor-core GEMMs); rel "
                        "err is then against a reference computed without "
                        "it")
    p.add_argument("--no-chart", action="store_true")
    p.add_argument("--list-systems", action="store_true")
    args = p.parse_args(argv)
    if args.list_systems:
        for s in SYSTEMS.values():
            print(f"{s.name:22s} {s.family:8s} {','.join(s.models):13s} "
                  f"{s.description}")
        sys.exit(0)
    if args.repeats < MIN_REPEATS:
        p.error(f"--repeats must be >= {MIN_REPEATS}")
    if args.case_timeout is not None and args.case_timeout <= 0:
        p.error("--case-timeout must be positive")
    if args.prepare_timeout is not None and args.prepare_timeout <= 0:
        p.error("--prepare-timeout must be positive")
    if args.warmup < 0:
        p.error("--warmup must be >= 0")
    if args.dim <= 0 or args.heads <= 0 or args.dim % args.heads:
        p.error("--dim and --heads must be positive, dim a multiple of heads")
    for path in args.skip_done:
        if not os.path.isfile(path):
            p.error(f"--skip-done: no file {path!r}")
    return args


def main(argv=None):
    from .runner import Config, run

    args = parse_args(argv)
    cfg = Config(datasets=args.datasets, models=args.models,
                 modes=args.modes, systems=args.systems, dim=args.dim,
                 heads=args.heads, scale=args.scale, device=args.device,
                 repeats=args.repeats, warmup=args.warmup, out=args.out,
                 seed=args.seed, chart=not args.no_chart,
                 case_timeout=args.case_timeout,
                 prepare_timeout=args.prepare_timeout,
                 skip_done=args.skip_done,
                 tf32=args.tf32)
    try:
        import torch_geometric  # noqa: F401
    except ImportError:
        print("hector.bench needs torch_geometric (the baselines and the "
              "shared weights); see scripts/setup.sh", file=sys.stderr)
        return 2
    run(cfg)
    return 0


if __name__ == "__main__":
    sys.exit(main())

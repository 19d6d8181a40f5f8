"""hector.bench: Hector against its peers in one run (issue 8).

    python -m hector.bench [--datasets aifb,mutag,...] [--models rgcn,rgat,hgt]
        [--modes inference,training] [--systems NAME,...] [--dim 64]
        [--heads 1] [--scale 1.0] [--device cuda] [--repeats 10]
        [--warmup 3] [--case-timeout S] [--skip-done RUN,...] [--out DIR]
        [--list-systems]

For each (dataset, model, mode, system): the same synthetic graph
(hector.datasets.synthetic) and the same random weights; a correctness check
against the PyG reference output; the median of >= 10 timed runs (CUDA
events on a GPU) after a warm-up; peak memory; the DRAM floor and the ratio
to it. OOM and other failures are recorded and the run goes on. Writes
results.jsonl, meta.json, table.md and chart.png (if matplotlib is
importable) to --out (default bench/results/<gpu-or-cpu>-<date>/).
results.jsonl and meta.json are written as the run goes, so a run cut by a
time limit keeps its records (each with its wall time, `elapsed_s`);
--skip-done leaves out the cases that earlier runs (their results.jsonl or
progress logs) recorded.

Systems live in hector.bench.systems (see its docstring for where the
compiled Hector variants plug in).
"""

from .runner import MODES, Config, run
from .systems import (SYSTEMS, VARIANTS, Prepared, System, Unavailable,
                      register)

__all__ = ["Config", "run", "MODES", "SYSTEMS", "VARIANTS", "System",
           "Prepared", "Unavailable", "register", "main"]


def main(argv=None):
    from .__main__ import main as _main
    return _main(argv)

"""Session 46, call f: section 110's changes to hector.nn's host path,
each switched off and on inside one process (so that the host's state,
which moved a whole run's small-graph times by 10% to 30% between
processes in call e, is the same for both sides).

Switches (off = main's behaviour):
  view   x_dict's rows and the harness's HGT output rows spanned without a
         copy (hector.nn._consecutive_view); off: always torch.cat
  lean   hector.nn's layers call the op through _run_model (no dict
         checks, hypers checked once); off: LayerLibrary.run with the hyper
         memo cleared before each call, as main checked them every call
For each case, `hector` (hector.nn) sync steps: the median of 30 (time_fn,
as the harness) for each setting, in 4 rounds alternating the order.
Usage: s46f_toggle.py [DEVICE [SCALE]]
"""
import json
import statistics
import sys

import torch

import hector.nn as hnn
from hector import datasets as hds
from hector.bench import systems as S
from hector.bench.problem import make_problem
from hector.bench.runner import _step, matmul_tf32
from hector.bench.timing import time_fn

CASES = [("hgt", "aifb"), ("hgt", "fb15k"), ("hgt", "am"),
         ("hgt", "wikikg2"), ("rgcn", "aifb"), ("rgcn", "am"),
         ("rgat", "aifb"), ("rgat", "fb15k")]
REAL_VIEW, REAL_RUN = hnn._consecutive_view, hnn._run_model


def main_run_model(model, graph, values, **hypers):
    lib = hnn._library(model)
    lib._hyper_memo.clear()
    return lib.run(graph, values, **hypers)[lib.outputs[0]]


def setting(view, lean):
    hnn._consecutive_view = REAL_VIEW if view else (lambda blocks: None)
    hnn._run_model = REAL_RUN if lean else main_run_model


def main():
    dev = torch.device(sys.argv[1] if len(sys.argv) > 1 else "cuda")
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    settings = {"main": (False, False), "view": (True, False),
                "lean": (False, True), "both": (True, True)}
    for model, ds in CASES:
        prob = make_problem(ds, model,
                            hds.synthetic(ds, device=dev, scale=scale), 64, 1,
                            dev)
        step = _step(S.SYSTEMS["hector"].prepare(prob), prob, "inference")
        times = {k: [] for k in settings}
        order = list(settings)
        with matmul_tf32(True):
            for rnd in range(4):
                for name in (order if rnd % 2 == 0 else order[::-1]):
                    setting(*settings[name])
                    times[name] += time_fn(step, dev, 30, 3)
        setting(True, True)
        med = {k: round(statistics.median(v), 4) for k, v in times.items()}
        print(json.dumps({"model": model, "dataset": ds, **med,
                          "main/both": round(med["main"] / med["both"], 3)}),
              flush=True)


if __name__ == "__main__":
    main()

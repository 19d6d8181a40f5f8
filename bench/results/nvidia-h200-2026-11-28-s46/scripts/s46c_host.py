"""Session 46, call c: where the host time of a synchronised `hector`
step goes (section 107's open question, section 109).

For a case's `hector` step (hector.nn's drop-in, as the harness runs it)
it times, with time.perf_counter_ns on the host, twenty synchronised
steps split at the generated op's call (hector.replay.run wrapped):
  py    step start -> the op's call (hector.nn's Python: checks, graph
        cache, LayerLibrary.run)
  op    the op's call -> its return (graph arrays, dispatch, the C++
        checks, allocation, launches)
  wait  the op's return -> the end event's synchronize returning
  event the CUDA events' elapsed time around the step (what the
        harness's time_fn reports)
and the same steps back to back (time_steps). Each of three ways to wait:
  sync  end.synchronize() (as time_fn)
  spin  a Python loop on end.query() (the host thread never sleeps)
  nogc  sync with Python's garbage collector off
Usage: s46c_host.py OUTDIR PHASE [DEVICE [SCALE]]; PHASE "fresh" times
mag then am; "after-am" runs the harness on am's RGCN inference
(`hector` alone, as section 107's call g) first, then times mag.
"""
import gc
import json
import statistics
import sys
import time

import torch

from hector import bench, replay
from hector import datasets as hds
from hector.bench import systems as S
from hector.bench.problem import make_problem
from hector.bench.runner import _step, matmul_tf32
from hector.bench.throughput import time_steps

MARKS = {}


def instrument():
    real = replay.run

    def timed(*a, **k):
        MARKS["enter"] = time.perf_counter_ns()
        out = real(*a, **k)
        MARKS["exit"] = time.perf_counter_ns()
        return out
    replay.run = timed


def wait_for(end, how):
    if how == "spin":
        while not end.query():
            pass
    else:
        end.synchronize()


def split_steps(step, dev, how, n=20):
    cuda = dev.type == "cuda"
    rows = []
    if how == "nogc":
        gc.disable()
    try:
        for _ in range(n + 3):
            if cuda:
                torch.cuda.synchronize(dev)
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter_ns()
            if cuda:
                start.record()
            step()
            if cuda:
                end.record()
                wait_for(end, how)
            t1 = time.perf_counter_ns()
            rows.append({
                "py": (MARKS["enter"] - t0) / 1e3,
                "op": (MARKS["exit"] - MARKS["enter"]) / 1e3,
                "wait": (t1 - MARKS["exit"]) / 1e3,
                "event": start.elapsed_time(end) * 1e3 if cuda else 0.0})
    finally:
        gc.enable()
    rows = rows[3:]
    return {k: round(statistics.median(r[k] for r in rows), 1)
            for k in rows[0]}


def measure(name, dev, scale, phase):
    prob = make_problem(name, "rgcn",
                        hds.synthetic(name, device=dev, scale=scale), 64, 1,
                        dev)
    step = _step(S.SYSTEMS["hector"].prepare(prob), prob, "inference")
    with matmul_tf32(True):
        b2b = time_steps(step, dev, 30, 3)
        for how in ("sync", "spin", "nogc", "sync"):
            row = {"phase": phase, "dataset": name, "how": how,
                   "b2b_ms": round(b2b, 4)}
            row.update(split_steps(step, dev, how))
            print(json.dumps(row), flush=True)


def main():
    out, phase = sys.argv[1], sys.argv[2]
    dev = torch.device(sys.argv[3] if len(sys.argv) > 3 else "cuda")
    scale = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
    instrument()
    print(json.dumps({"gc_objects_at_start": len(gc.get_objects())}))
    if phase == "after-am":
        bench.run(bench.Config(datasets=["am"], models=["rgcn"],
                               modes=["inference"], systems=["hector"],
                               device=str(dev), scale=scale, tf32=True,
                               chart=False, out=f"{out}/harness-am"),
                  log=lambda *a: None)
        print(json.dumps({"gc_objects_after_am": len(gc.get_objects())}))
        measure("mag", dev, scale, phase)
    else:
        measure("mag", dev, scale, phase)
        measure("am", dev, scale, phase)


if __name__ == "__main__":
    main()

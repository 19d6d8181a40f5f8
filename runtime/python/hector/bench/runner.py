"""The benchmark loop: for each dataset, model, system and mode, a
correctness check and then timing; every failure is recorded and the run
goes on. Statuses: "ok", "oom", "failed", "timeout" (a step, the second
when the first was slower, took longer than Config.case_timeout seconds:
the system is not timed further there; or its preparation or a mode's
first step took longer than Config.prepare_timeout),
and "unavailable" (the system cannot run in this build, e.g. a Hector
variant whose library is not built)."""

import datetime
import math
import os
import platform
import re
import statistics
import sys
import time
import contextlib
import traceback
from dataclasses import dataclass, field
from typing import List, Optional

import torch

from . import gpu_state
from . import systems as _systems
from .merge import read_records
from .problem import MODELS, floor_bytes, make_problem
from .timing import (WallLimitExceeded, copy_bandwidth, empty_cache, is_oom,
                     peak_bytes, reset_peak, time_fn, time_once,
                     training_step_floor, wall_limit)

__all__ = ["Config", "run", "MODES", "device_slug", "default_out_dir"]

MODES = ("inference", "training")
MIN_REPEATS = 10


@dataclass
class Config:
    datasets: List[str]
    models: List[str] = field(default_factory=lambda: list(MODELS))
    modes: List[str] = field(default_factory=lambda: list(MODES))
    systems: List[str] = None         # None: all registered
    dim: int = 64
    heads: int = 1
    scale: float = 1.0
    device: str = None
    repeats: int = 10
    warmup: int = 3
    out: Optional[str] = None
    seed: int = 0
    min_repeats: int = MIN_REPEATS    # tests lower it; the CLI does not
    chart: bool = True
    # A step slower than this (seconds, measured once before timing) is
    # recorded as "timeout" instead of being run warmup + repeats times.
    case_timeout: Optional[float] = None
    # A system whose preparation (torch.compile's compilation included)
    # takes longer than this (seconds, wall time), or whose first step of
    # a mode does (the backward compiles there), is recorded as "timeout"
    # for those cases: one compilation must not eat a time-limited call.
    prepare_timeout: Optional[float] = None
    # Earlier runs' results.jsonl files or progress logs: the cases they
    # recorded are not run again (a long benchmark split over several
    # time-limited calls; `python -m hector.bench.merge` joins the runs).
    skip_done: List[str] = field(default_factory=list)
    # torch.backends.cuda.matmul.allow_tf32 for every system's runs (PyG's
    # cuBLAS matmuls and Hector's tensor-core GEMMs alike); the reference
    # output the others are checked against is computed without it.
    tf32: bool = False


def done_cases(records):
    """The (dataset, model, mode, system) cases of earlier runs' records,
    but for 'unavailable' ones: a system that was not built then may be
    now."""
    return {(r["dataset"], r["model"], r["mode"], r["system"])
            for r in records if r.get("status") != "unavailable"}


def device_slug(device):
    device = torch.device(device)
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
        return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return device.type


def default_out_dir(device):
    from .._ext import _REPO_ROOT
    return os.path.join(_REPO_ROOT, "bench", "results",
                        f"{device_slug(device)}-{datetime.date.today()}")


def rel_err(actual, expected):
    a, e = actual.detach().double(), expected.detach().double()
    if a.shape != e.shape:
        raise ValueError(f"output shape {tuple(a.shape)} != reference "
                         f"{tuple(e.shape)}")
    scale = e.norm().item()
    diff = (a - e).norm().item()
    return diff / scale if scale > 0 else diff


def _short(exc):
    msg = f"{type(exc).__name__}: {exc}".strip()
    msg = msg.splitlines()[0] if msg else type(exc).__name__
    return msg[:500]


def _log(msg):
    print(msg, flush=True)


def _versions():
    v = {"torch": torch.__version__, "python": platform.python_version()}
    try:
        import torch_geometric
        v["torch_geometric"] = torch_geometric.__version__
    except Exception:  # noqa: BLE001
        pass
    return v


def host_cpu_name():
    """The host CPU's model name (Linux: /proc/cpuinfo), else what
    `platform` knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def host_record(device):
    """What a run records of its host: on the small graphs a step waits on
    the host CPU, so speedups there hold only for a host like this one."""
    return {"cpu": host_cpu_name(), "cpus": os.cpu_count(),
            "step_floor_ms": training_step_floor(device)}


def hector_environment():
    """The HECTOR_* variables of this process (kernel switches such as
    HECTOR_FIXED_HYPERS and HECTOR_GEMM_MMA, hub and heavy-row limits):
    they change which kernels run, so a run records them."""
    return {k: v for k, v in sorted(os.environ.items())
            if k.startswith("HECTOR_")}


@contextlib.contextmanager
def matmul_tf32(allowed):
    """torch.backends.cuda.matmul.allow_tf32 set to `allowed` inside, and
    back to what it was after."""
    matmul = torch.backends.cuda.matmul
    before = matmul.allow_tf32
    matmul.allow_tf32 = allowed
    try:
        yield
    finally:
        matmul.allow_tf32 = before


def run(cfg: Config, log=_log):
    """Runs the benchmark of `cfg`; returns (records, out_dir). Writes
    results.jsonl, table.md and (if matplotlib is importable) chart.png.
    With cfg.tf32, torch's matmuls may use TF32 while it runs."""
    with matmul_tf32(cfg.tf32):
        return _run(cfg, log)


def _run(cfg, log):
    from .. import datasets as hds
    from . import report

    if cfg.repeats < cfg.min_repeats:
        raise ValueError(f"--repeats must be >= {cfg.min_repeats}, got "
                         f"{cfg.repeats}")
    device = torch.device(cfg.device or
                          ("cuda" if torch.cuda.is_available() else "cpu"))
    names = cfg.systems if cfg.systems is not None else \
        _systems.default_systems()
    unknown = [n for n in names if n not in _systems.SYSTEMS]
    if unknown:
        raise ValueError(f"unknown system(s) {unknown}; known: "
                         f"{list(_systems.SYSTEMS)}")
    for m in cfg.models:
        if m not in MODELS:
            raise ValueError(f"unknown model {m!r}; known: {MODELS}")
    for m in cfg.modes:
        if m not in MODES:
            raise ValueError(f"unknown mode {m!r}; known: {MODES}")
    # Each --skip-done file read once: {path: its records}.
    earlier = {path: read_records(path) for path in cfg.skip_done}
    done = done_cases(r for recs in earlier.values() for r in recs)
    out_dir = cfg.out or default_out_dir(device)
    os.makedirs(out_dir, exist_ok=True)

    bw = copy_bandwidth(device)
    meta = {"device": str(device),
            "device_name": (torch.cuda.get_device_name(device)
                            if device.type == "cuda" else platform.processor()
                            or platform.machine()),
            "copy_bandwidth_Bps": bw, "dim": cfg.dim, "heads": cfg.heads,
            "scale": cfg.scale, "repeats": cfg.repeats, "warmup": cfg.warmup,
            "tf32": cfg.tf32, "host": host_record(device),
            "environment": hector_environment(),
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
            "versions": _versions(), "argv": sys.argv}
    log(f"hector.bench on {meta['device_name']} ({device}); copy bandwidth "
        f"{bw / 1e9:.1f} GB/s; dim {cfg.dim}, heads {cfg.heads}, scale "
        f"{cfg.scale}; results in {out_dir}")
    log(report.host_line(meta["host"]))
    if done:
        log(f"skipping {len(done)} cases recorded in "
            f"{', '.join(cfg.skip_done)}")

    # results.jsonl and meta.json grow as the run goes, so that a run cut
    # by a time limit leaves its complete records; the end rewrites both
    # and adds the table and chart.
    report.write_meta(meta, out_dir)
    results_path = os.path.join(out_dir, "results.jsonl")
    # Continuing in place (--skip-done naming this run's own results):
    # keep what is there.
    records = [r for path, recs in earlier.items()
               if os.path.exists(results_path)
               and os.path.samefile(path, results_path)
               for r in recs]
    partial = open(results_path, "w")
    for r in records:
        partial.write(report.record_line(r))

    def emit(rec):
        records.append(rec)
        partial.write(report.record_line(rec))
        partial.flush()
        t = rec.get("time_ms")
        if rec["status"] == "ok":
            what = (f"{t:9.3f} ms  floor x{rec['ratio_to_floor']:.1f}  "
                    f"peak {_mb(rec.get('peak_mem_bytes'))}")
            clock = gpu_state.describe(rec.get("gpu_state"))
            if clock:
                what += f"  {clock}"
        else:
            what = rec["status"].upper() + (f": {rec['error']}"
                                            if rec.get("error") else "")
        err = rec.get("rel_err")
        err = f"  rel_err {err:.1e}" if err is not None else ""
        log(f"[{len(records):4d}] {rec['dataset']:8s} {rec['model']:4s} "
            f"{rec['mode']:9s} {rec['system']:22s} {what}{err}")

    for ds in cfg.datasets:
        t0 = time.perf_counter()
        try:
            graph = hds.synthetic(ds, seed=cfg.seed, device=device,
                                  scale=cfg.scale)
            gerr = None
        except Exception as exc:  # noqa: BLE001
            graph, gerr = None, exc
            empty_cache(device)
        if graph is not None:
            log(f"-- {ds}: {graph.num_nodes} nodes ({graph.num_ntypes} "
                f"types), {graph.num_edges} edges ({graph.num_etypes} "
                f"relations), built in {time.perf_counter() - t0:.2f} s")
        for model in cfg.models:
            syss = [s for s in _systems.systems_for(model, names)
                    if any((ds, model, m, s.name) not in done
                           for m in cfg.modes)]
            if not syss:
                continue
            base = {"dataset": ds, "model": model, "dim": cfg.dim,
                    "heads": cfg.heads, "scale": cfg.scale,
                    "device": str(device),
                    "device_name": meta["device_name"]}
            if graph is not None:
                base.update(num_nodes=graph.num_nodes,
                            num_edges=graph.num_edges,
                            num_ntypes=graph.num_ntypes,
                            num_etypes=graph.num_etypes)
            prob, perr = None, gerr
            if graph is not None:
                try:
                    torch.manual_seed(cfg.seed)
                    prob = make_problem(ds, model, graph, cfg.dim, cfg.heads,
                                        device, seed=cfg.seed)
                except Exception as exc:  # noqa: BLE001
                    perr = exc
                    empty_cache(device)
            if prob is None:
                for s in syss:
                    for mode in cfg.modes:
                        emit(dict(base, mode=mode, system=s.name,
                                  family=s.family,
                                  status="oom" if is_oom(perr) else "failed",
                                  error=_short(perr)))
                continue
            _run_model(prob, syss, cfg, base, bw, emit, device, done)
            del prob
            empty_cache(device)
        del graph
        empty_cache(device)

    partial.close()
    report.write_all(records, meta, out_dir, chart=cfg.chart, log=log)
    return records, out_dir


def _mb(b):
    return "-" if b is None else f"{b / 2**20:.1f} MiB"


def _run_model(prob, syss, cfg, base, bw, emit, device, done=frozenset()):
    ref_name = _systems.REFERENCE.get(prob.model)
    ref_out = None
    if ref_name and ref_name not in [s.name for s in syss]:
        # The reference is not benchmarked: still compute its output once
        # (without TF32, so that rel err measures what TF32 costs).
        try:
            with torch.no_grad(), matmul_tf32(False):
                ref_out = _systems.SYSTEMS[ref_name].prepare(prob) \
                    .forward().detach()
        except Exception:  # noqa: BLE001
            ref_out = None
            empty_cache(device)
    for s in syss:
        rec0 = dict(base, system=s.name, family=s.family,
                    description=s.description, ref_system=ref_name)
        # Prepare and check once per (dataset, model, system).
        prepared, err, rel = None, None, None
        t_prepare = time.perf_counter()
        try:
            reset_peak(device)
            with wall_limit(cfg.prepare_timeout):
                prepared = s.prepare(prob)
                exact = matmul_tf32(False) if s.name == ref_name else \
                    contextlib.nullcontext()
                with torch.no_grad(), exact:
                    out = prepared.forward()
            if s.name == ref_name:
                ref_out = out.detach()
                rel = 0.0
            elif ref_out is not None:
                rel = rel_err(out, ref_out)
            del out
            if rel is not None and not math.isfinite(rel):
                raise FloatingPointError(f"output not finite (rel err {rel})")
        except _systems.Unavailable as exc:
            err = ("unavailable", str(exc)[:500], None)
            prepared = None
            del exc
        except WallLimitExceeded:
            err = ("timeout", f"preparing it took over "
                   f"{cfg.prepare_timeout:g} s (--prepare-timeout)", None)
            prepared = None
            _forget_compilations()
            empty_cache(device)
        except Exception as exc:  # noqa: BLE001
            # Keep strings only: the exception's frames hold tensors, which
            # must be freed after an OOM before the next system runs.
            err = ("oom" if is_oom(exc) else "failed", _short(exc),
                   "".join(traceback.format_exception(
                       type(exc), exc, exc.__traceback__))[-4000:])
            prepared = None
            del exc
            empty_cache(device)
        # Wall time of each record, preparation (compilation) included:
        # what a case costs a time-limited session.
        t_case = t_prepare

        def finish(rec):
            nonlocal t_case
            now = time.perf_counter()
            rec["elapsed_s"] = round(now - t_case, 3)
            t_case = now
            emit(rec)

        for mode in cfg.modes:
            if (prob.dataset, prob.model, mode, s.name) in done:
                continue
            rec = dict(rec0, mode=mode, rel_err=rel,
                       repeats=cfg.repeats, warmup=cfg.warmup)
            fb = floor_bytes(prob, mode)
            rec["floor_bytes"] = fb
            rec["floor_ms"] = fb / bw * 1e3
            if prepared is None:
                rec["status"], rec["error"] = err[0], err[1]
                if rec["status"] == "failed":
                    rec["traceback"] = err[2]
                finish(rec)
                continue
            try:
                fn = _step(prepared, prob, mode)
                reset_peak(device)
                with wall_limit(cfg.prepare_timeout):
                    probe = time_once(fn, device)
                    if cfg.case_timeout is not None and \
                            probe > cfg.case_timeout:
                        # A first call may compile (torch.compile's
                        # backward is compiled on the first training
                        # step): judge the second.
                        probe = time_once(fn, device)
                rec["probe_ms"] = probe * 1e3
                if cfg.case_timeout is not None and probe > cfg.case_timeout:
                    rec["status"] = "timeout"
                    rec["error"] = (f"one step took {probe:.1f} s > "
                                    f"--case-timeout {cfg.case_timeout:g} s")
                    finish(rec)
                    continue
                # The probe was a warm-up run; a slow step needs no more.
                warmup = cfg.warmup - 1 if probe < 1.0 else 0
                times = time_fn(fn, device, cfg.repeats, max(0, warmup))
                # Right after the timed steps, the clock they ran at.
                state = gpu_state.sample(device)
                if state is not None:
                    rec["gpu_state"] = state
                rec["peak_mem_bytes"] = peak_bytes(device)
                rec["times_ms"] = times
                rec["time_ms"] = statistics.median(times)
                rec["ratio_to_floor"] = rec["time_ms"] / rec["floor_ms"] \
                    if rec["floor_ms"] > 0 else None
                rec["status"] = "ok"
            except WallLimitExceeded:
                rec["status"] = "timeout"
                rec["error"] = (f"its first step took over "
                                f"{cfg.prepare_timeout:g} s "
                                f"(--prepare-timeout)")
                _forget_compilations()
            except Exception as exc:  # noqa: BLE001
                rec["status"] = "oom" if is_oom(exc) else "failed"
                rec["error"] = _short(exc)
            finally:
                for p in prepared.params:
                    p.grad = None
                empty_cache(device)
            finish(rec)
        del prepared
        empty_cache(device)


def _forget_compilations():
    """Drops torch.compile's state after a compilation was interrupted, so
    that the next system does not meet a half-built cache entry."""
    dynamo = getattr(torch, "_dynamo", None)
    if dynamo is not None and hasattr(dynamo, "reset"):
        dynamo.reset()


def _step(prepared, prob, mode):
    fwd, params, target = prepared.forward, prepared.params, prob.target
    if mode == "inference":
        def infer():
            with torch.no_grad():
                fwd()
        return infer

    def train():
        for p in params:
            p.grad = None
        out = fwd()
        loss = torch.nn.functional.mse_loss(out, target)
        loss.backward()
    return train

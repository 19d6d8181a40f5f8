"""hector.bench (python -m hector.bench) end to end on the CPU at a tiny
scale: outputs written, the Hector systems (hector.nn drop-ins, the
compiled variants, the interpreter) checked against PyG, OOM, failures and
unavailable systems recorded without stopping the run."""

import json
import os
import subprocess
import sys

import pytest
import torch

pytest.importorskip(
    "torch_geometric", reason="torch_geometric is not installed (see "
    "scripts/setup.sh for the pip command)")

from hector import bench  # noqa: E402
from hector.bench import systems as bench_systems  # noqa: E402
from hector.bench.problem import floor_bytes  # noqa: E402

SCALE = 0.0005
DATASETS = ["aifb", "mutag"]


def _cfg(tmp_path, **kw):
    base = dict(datasets=DATASETS, models=["rgcn", "rgat"],
                modes=["inference", "training"], device="cpu", scale=SCALE,
                repeats=3, warmup=1, min_repeats=3, out=str(tmp_path))
    base.update(kw)
    return bench.Config(**base)


def _quiet(_msg):
    pass


def _read(out):
    with open(os.path.join(out, "results.jsonl")) as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    lines = []
    records, out_dir = bench.run(_cfg(out), log=lines.append)
    return records, out_dir, lines


def test_runs_end_to_end_and_writes_outputs(full_run):
    records, out_dir, lines = full_run
    for name in ("results.jsonl", "table.md", "meta.json"):
        assert os.path.isfile(os.path.join(out_dir, name)), name
    try:
        import matplotlib  # noqa: F401
        assert os.path.isfile(os.path.join(out_dir, "chart.png"))
    except ImportError:
        assert any("matplotlib" in line for line in lines)
    on_disk = _read(out_dir)
    assert len(on_disk) == len(records)
    # Every (dataset, model, mode, system that runs the model) is there.
    expected = set()
    for ds in DATASETS:
        for model in ("rgcn", "rgat"):
            for s in bench_systems.SYSTEMS.values():
                if model in s.models:
                    for mode in ("inference", "training"):
                        expected.add((ds, model, mode, s.name))
    got = {(r["dataset"], r["model"], r["mode"], r["system"])
           for r in on_disk}
    assert got == expected
    # One progress line per case.
    assert sum(1 for line in lines if line.startswith("[")) == len(records)


def test_eager_systems_time_and_match_pyg(full_run):
    records, _, _ = full_run
    must_run = {"pyg-rgcn", "pyg-fastrgcn", "segmm-rgcn", "pyg-rgat",
                "hector-interpreter", "hector", "hector-cr"}
    for r in records:
        if r["system"] not in must_run:
            continue
        assert r["status"] == "ok", r
        assert len(r["times_ms"]) == 3
        assert r["time_ms"] > 0
        assert r["rel_err"] is not None and r["rel_err"] < 1e-4, r
        assert r["floor_ms"] > 0 and r["ratio_to_floor"] > 0
        assert r["floor_bytes"] > 0
    interp = [r for r in records if r["system"] == "hector-interpreter"]
    assert len(interp) == 2 * 2 * 2
    # The oracle is timed but is neither side of the speedup.
    assert all(r["family"] == "oracle" for r in interp)


def test_compile_variants_recorded(full_run):
    records, _, _ = full_run
    comp = [r for r in records if r["system"].endswith("-compile")]
    assert comp
    for r in comp:
        assert r["status"] in ("ok", "failed", "oom")
        if not hasattr(torch, "compile"):
            assert r["status"] == "failed"
            assert "torch.compile" in r["error"]


def test_table_has_speedups_and_geomeans(full_run):
    _, out_dir, _ = full_run
    with open(os.path.join(out_dir, "table.md")) as f:
        text = f.read()
    for model in ("rgcn", "rgat"):
        for mode in ("inference", "training"):
            assert f"## {model} {mode}" in text
            assert f"Geometric mean speedup ({model} {mode}, 2 datasets" \
                in text
    assert "hector-interpreter" in text and "interpreter" in text
    assert " hector | hector-u | hector-c | hector-r | hector-cr |" in text
    assert "| aifb |" in text and "| mutag |" in text


@pytest.fixture
def fake_systems():
    added = []

    def add(system):
        bench_systems.register(system)
        added.append(system.name)
        return system
    yield add
    for name in added:
        bench_systems.SYSTEMS.pop(name, None)


def _oom_error():
    cls = getattr(torch.cuda, "OutOfMemoryError", None)
    msg = "CUDA out of memory. Tried to allocate 20.00 GiB"
    return cls(msg) if cls is not None else RuntimeError(msg)


def test_oom_and_failures_recorded_and_run_goes_on(tmp_path, fake_systems):
    def oom_in_prepare(prob):
        raise _oom_error()

    def oom_in_training(prob):
        w = prob.weights()

        def forward():
            if torch.is_grad_enabled():
                raise RuntimeError("CUDA out of memory. Tried to allocate "
                                   "1.00 GiB (fake)")
            return prob.x @ torch.eye(prob.dim)
        return bench.Prepared(forward, w)

    def broken(prob):
        raise ValueError("something else went wrong")

    fake_systems(bench.System("fake-oom", "baseline", ("rgcn",),
                              oom_in_prepare))
    fake_systems(bench.System("fake-oom-train", "hector", ("rgcn",),
                              oom_in_training))
    fake_systems(bench.System("fake-broken", "baseline", ("rgcn",), broken))
    names = ["fake-oom", "pyg-rgcn", "fake-oom-train", "fake-broken",
             "hector-interpreter"]
    records, out = bench.run(_cfg(tmp_path, models=["rgcn"], systems=names),
                             log=_quiet)
    by = {(r["dataset"], r["mode"], r["system"]): r for r in records}
    for ds in DATASETS:
        for mode in ("inference", "training"):
            r = by[(ds, mode, "fake-oom")]
            assert r["status"] == "oom" and "out of memory" in r["error"]
            assert "time_ms" not in r
            b = by[(ds, mode, "fake-broken")]
            assert b["status"] == "failed"
            assert "something else went wrong" in b["error"]
            assert by[(ds, mode, "pyg-rgcn")]["status"] == "ok"
            assert by[(ds, mode, "hector-interpreter")]["status"] == "ok"
        assert by[(ds, "inference", "fake-oom-train")]["status"] == "ok"
        assert by[(ds, "training", "fake-oom-train")]["status"] == "oom"
    with open(os.path.join(out, "table.md")) as f:
        text = f.read()
    assert "OOM" in text and "fail" in text
    assert f"{len(records)} cases: " in text


def test_tf32_allowed_for_the_timed_runs_not_the_reference(tmp_path,
                                                           monkeypatch):
    """--tf32: every system runs with torch's allow_tf32 on, except the
    reference's check output; the flag is restored and recorded."""
    seen = {"pyg-rgcn": [], "fake-tf32-probe": []}

    def probe(name, real):
        def prepare(prob):
            inner = real(prob) if real else None

            def forward():
                seen[name].append(torch.backends.cuda.matmul.allow_tf32)
                return inner.forward() if inner else \
                    prob.x @ torch.eye(prob.dim)
            return bench.Prepared(forward, inner.params if inner
                                  else prob.weights())
        return prepare

    real_ref = bench_systems.SYSTEMS["pyg-rgcn"]
    monkeypatch.setitem(bench_systems.SYSTEMS, "pyg-rgcn", bench.System(
        "pyg-rgcn", "baseline", ("rgcn",), probe("pyg-rgcn",
                                                  real_ref.prepare)))
    monkeypatch.setitem(bench_systems.SYSTEMS, "fake-tf32-probe",
                        bench.System("fake-tf32-probe", "hector", ("rgcn",),
                                     probe("fake-tf32-probe", None)))
    before = torch.backends.cuda.matmul.allow_tf32
    records, out = bench.run(_cfg(tmp_path, datasets=["aifb"],
                                  models=["rgcn"], modes=["inference"],
                                  systems=["pyg-rgcn", "fake-tf32-probe"],
                                  tf32=True), log=_quiet)
    assert torch.backends.cuda.matmul.allow_tf32 == before
    # The reference's first forward is its check output: no TF32.
    assert seen["pyg-rgcn"][0] is False and all(seen["pyg-rgcn"][1:])
    assert len(seen["pyg-rgcn"]) > 1 and all(seen["fake-tf32-probe"])
    with open(os.path.join(out, "meta.json")) as f:
        assert json.load(f)["tf32"] is True
    with open(os.path.join(out, "table.md")) as f:
        assert "TF32 matmuls allowed" in f.read()


def test_hector_environment_recorded(tmp_path, monkeypatch):
    """The HECTOR_* switches of the run (which kernels ran) are in
    meta.json and the table's header; other variables are not."""
    monkeypatch.setenv("HECTOR_FIXED_HYPERS", "0")
    monkeypatch.setenv("NOT_HECTOR_X", "1")
    records, out = bench.run(_cfg(tmp_path, datasets=["aifb"],
                                  models=["rgcn"], modes=["inference"],
                                  systems=["pyg-rgcn"]), log=_quiet)
    with open(os.path.join(out, "meta.json")) as f:
        env = json.load(f)["environment"]
    assert env["HECTOR_FIXED_HYPERS"] == "0"
    assert "NOT_HECTOR_X" not in env
    with open(os.path.join(out, "table.md")) as f:
        assert "HECTOR_FIXED_HYPERS=0; " in f.read()


def test_gpu_state_recorded_beside_the_times(tmp_path, monkeypatch):
    """Each timed case records the GPU's clock and throttle reasons read
    right after its steps (hector.bench.gpu_state), and the log line names
    a slowdown; a CPU run records none."""
    from hector.bench import gpu_state
    cfg = dict(datasets=["aifb"], models=["rgcn"], modes=["inference"],
               systems=["pyg-rgcn"])
    records, _ = bench.run(_cfg(tmp_path / "cpu", **cfg), log=_quiet)
    assert records and all("gpu_state" not in r for r in records)

    state = {"sm_clock_mhz": 1860, "mem_clock_mhz": 3201, "power_w": 694.0,
             "temperature_c": 58, "throttle": ["power cap"]}
    sampled = []

    def fake_sample(device):
        sampled.append(str(device))
        return state
    monkeypatch.setattr(gpu_state, "sample", fake_sample)
    lines = []
    records, out = bench.run(_cfg(tmp_path / "gpu", **cfg), log=lines.append)
    ok = [r for r in records if r["status"] == "ok"]
    assert ok and all(r["gpu_state"] == state for r in ok)
    assert len(sampled) == len(ok)
    assert [r["gpu_state"] for r in _read(out)] == [state] * len(ok)
    assert any("1860 MHz (power cap)" in line for line in lines)


def test_host_recorded_in_meta_log_and_table(full_run):
    """A run records its host CPU and the time of the smallest training
    step (what every step pays to PyTorch on that host) in meta.json, in a
    progress-log line that parses back, and in the table's header."""
    from hector.bench import report

    records, out_dir, lines = full_run
    with open(os.path.join(out_dir, "meta.json")) as f:
        host = json.load(f)["host"]
    assert isinstance(host["cpu"], str) and host["cpu"]
    assert host["cpus"] == os.cpu_count()
    # A loss and a backward on the CPU: microseconds, not nothing.
    assert 0.0 < host["step_floor_ms"] < 1000.0
    logged = [report.parse_host_line(line) for line in lines]
    logged = [h for h in logged if h]
    assert len(logged) == 1
    assert logged[0]["cpu"] == host["cpu"]
    assert logged[0]["cpus"] == host["cpus"]
    assert logged[0]["step_floor_ms"] == pytest.approx(
        host["step_floor_ms"], abs=5e-4)
    with open(os.path.join(out_dir, "table.md")) as f:
        header = f.read().splitlines()[2]
    assert (f"host CPU {host['cpu']} ({host['cpus']} CPUs), smallest "
            "training step") in header
    assert f"{host['step_floor_ms']:.3f} ms; " in header
    assert report.parse_host_line("host: nothing like the line") is None


def test_table_names_the_spread_of_merged_hosts():
    """A table merged from runs whose step floors differ gives their
    spread; one floor, or inputs without a host (older runs), add
    nothing."""
    from hector.bench import report

    def host(ms):
        return {"cpu": "c", "cpus": 2, "step_floor_ms": ms}
    meta = {"device_name": "x", "device": "cpu", "copy_bandwidth_Bps": 1e9,
            "dim": 8, "heads": 1, "scale": 1, "repeats": 10, "warmup": 1,
            "date": "-", "versions": {}, "host": host(0.25),
            "merged_from": [{"host": host(0.25)}, {"host": None},
                            {"host": host(0.125)}]}
    text = report.table_md([], meta)
    assert "smallest training step (loss and backward of a 64 x 64 leaf: " \
        "PyTorch's own cost in every step) 0.250 ms; " in text
    assert ("merged from runs whose smallest training step took "
            "0.125 to 0.250 ms; ") in text
    meta["merged_from"] = [{"host": host(0.25)}, {"host": None}]
    assert "merged from runs" not in report.table_md([], meta)
    del meta["host"]
    assert "smallest training step" not in report.table_md([], meta)


def test_case_timeout_recorded_and_run_goes_on(tmp_path, fake_systems):
    import time as _time

    def slow(prob):
        w = prob.weights()

        def forward():
            _time.sleep(0.3)
            return prob.x @ torch.eye(prob.dim)
        return bench.Prepared(forward, w)

    fake_systems(bench.System("fake-slow", "baseline", ("rgcn",), slow))
    records, out = bench.run(
        _cfg(tmp_path, models=["rgcn"], modes=["inference"],
             systems=["fake-slow", "pyg-rgcn"], case_timeout=0.2),
        log=_quiet)
    by = {(r["dataset"], r["system"]): r for r in records}
    for ds in DATASETS:
        r = by[(ds, "fake-slow")]
        assert r["status"] == "timeout", r
        assert "--case-timeout 0.2" in r["error"]
        assert r["probe_ms"] >= 300
        assert "time_ms" not in r
        assert by[(ds, "pyg-rgcn")]["status"] == "ok"
    with open(os.path.join(out, "table.md")) as f:
        text = f.read()
    assert "slow" in text
    assert f"{len(DATASETS)} over the case or prepare timeout" in text
    with pytest.raises(SystemExit):
        bench.main(["--case-timeout", "0", "--device", "cpu"])


def test_prepare_timeout_cuts_a_long_compilation(tmp_path, fake_systems):
    """A preparation (a compilation) or a first step that runs past
    --prepare-timeout is interrupted and recorded as 'timeout'; the run
    goes on with the next system and the next mode."""
    import time as _time

    def slow_to_prepare(prob):
        _time.sleep(5)  # interrupted after 0.3 s
        raise AssertionError("the preparation was not interrupted")

    def slow_first_training_step(prob):
        weight = torch.eye(prob.dim, requires_grad=True)
        calls = {"training": 0}

        def forward():
            if torch.is_grad_enabled():
                calls["training"] += 1
                if calls["training"] == 1:
                    _time.sleep(5)  # a backward's compilation
            return prob.x @ weight
        return bench.Prepared(forward, [weight])

    fake_systems(bench.System("fake-slow-prepare", "baseline", ("rgcn",),
                              slow_to_prepare))
    fake_systems(bench.System("fake-slow-train", "baseline", ("rgcn",),
                              slow_first_training_step))
    t0 = _time.perf_counter()
    records, out = bench.run(
        _cfg(tmp_path, datasets=["aifb"], models=["rgcn"],
             systems=["fake-slow-prepare", "fake-slow-train", "pyg-rgcn"],
             prepare_timeout=0.3),
        log=_quiet)
    assert _time.perf_counter() - t0 < 4.5
    by = {(r["system"], r["mode"]): r for r in records}
    for mode in ("inference", "training"):
        r = by[("fake-slow-prepare", mode)]
        assert r["status"] == "timeout", r
        assert r["error"] == ("preparing it took over 0.3 s "
                              "(--prepare-timeout)")
        assert by[("pyg-rgcn", mode)]["status"] == "ok"
    assert by[("fake-slow-train", "inference")]["status"] == "ok"
    r = by[("fake-slow-train", "training")]
    assert r["status"] == "timeout", r
    assert r["error"] == ("its first step took over 0.3 s "
                          "(--prepare-timeout)")
    # The limit is lifted after each use: no alarm is left to go off.
    import signal
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    with pytest.raises(SystemExit):
        bench.main(["--prepare-timeout", "-1", "--device", "cpu"])


def test_records_are_written_as_they_come(tmp_path, fake_systems):
    """A run cut by a time limit keeps its records: results.jsonl grows
    with every record, meta.json is there from the start."""
    seen = []

    def watching(prob):
        w = prob.weights()
        # What results.jsonl holds when this system starts.
        seen.append(len(_read(str(tmp_path))))
        assert os.path.exists(os.path.join(str(tmp_path), "meta.json"))
        return bench.Prepared(lambda: prob.x @ torch.eye(prob.dim), w)

    fake_systems(bench.System("fake-watch", "baseline", ("rgcn",),
                              watching))
    records, out = bench.run(
        _cfg(tmp_path, models=["rgcn"], systems=["pyg-rgcn", "fake-watch"]),
        log=_quiet)
    # Before each dataset's fake-watch: pyg-rgcn's two records of this
    # dataset, and all four of the datasets before.
    assert seen == [2, 6]
    assert [(r["dataset"], r["mode"], r["system"]) for r in _read(out)] == \
        [(r["dataset"], r["mode"], r["system"]) for r in records]
    for r in records:
        assert r["elapsed_s"] >= 0


def test_skip_done_runs_only_the_missing_cases(tmp_path):
    first = tmp_path / "first"
    records, _ = bench.run(
        _cfg(first, models=["rgcn"], datasets=["aifb"],
             systems=["pyg-rgcn"]), log=_quiet)
    assert len(records) == 2
    # A second run over more datasets and systems, skipping what the
    # first recorded.
    second = tmp_path / "second"
    lines = []
    records2, _ = bench.run(
        _cfg(second, models=["rgcn"], systems=["pyg-rgcn", "segmm-rgcn"],
             skip_done=[str(first / "results.jsonl")]), log=lines.append)
    got = sorted((r["dataset"], r["mode"], r["system"]) for r in records2)
    want = sorted((ds, mode, s) for ds in DATASETS
                  for mode in ("inference", "training")
                  for s in ("pyg-rgcn", "segmm-rgcn")
                  if (ds, s) != ("aifb", "pyg-rgcn"))
    assert got == want
    assert all(r["status"] == "ok" for r in records2)
    assert any("skipping 2 cases" in line for line in lines)
    # A progress log names the done cases as well.
    log = tmp_path / "run.log"
    log.write_text("\n".join(lines) + "\n")
    records3, _ = bench.run(
        _cfg(tmp_path / "third", models=["rgcn"],
             systems=["pyg-rgcn", "segmm-rgcn"],
             skip_done=[str(first / "results.jsonl"), str(log)]),
        log=_quiet)
    assert records3 == []


def test_skip_done_in_place_keeps_the_earlier_records(tmp_path):
    out = tmp_path / "run"
    bench.run(_cfg(out, models=["rgcn"], datasets=["aifb"],
                   systems=["pyg-rgcn"]), log=_quiet)
    path = str(out / "results.jsonl")
    records, _ = bench.run(
        _cfg(out, models=["rgcn"], systems=["pyg-rgcn"], skip_done=[path]),
        log=_quiet)
    cases = [(r["dataset"], r["mode"]) for r in _read(str(out))]
    assert cases == [("aifb", "inference"), ("aifb", "training"),
                     ("mutag", "inference"), ("mutag", "training")]
    assert len(records) == 4
    with open(out / "table.md") as f:
        assert "4 cases" in f.read()


def test_skip_done_names_a_missing_file(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--device", "cpu", "--skip-done", "/nonexistent.jsonl"])
    assert "--skip-done: no file '/nonexistent.jsonl'" in \
        capsys.readouterr().err


def test_ablation_table_speedups_over_unoptimised():
    from hector.bench import report

    def rec(ds, system, t, status="ok"):
        return {"dataset": ds, "model": "rgat", "mode": "training",
                "system": system, "family": "hector", "status": status,
                "time_ms": t, "ratio_to_floor": 1.0}
    records = [rec("aifb", "hector-u", 8.0), rec("aifb", "hector-c", 4.0),
               rec("aifb", "hector-r", 2.0), rec("aifb", "hector-cr", 1.0),
               rec("mutag", "hector-u", 9.0), rec("mutag", "hector-c", 9.0,
                                                  "oom"),
               rec("mutag", "hector-r", 3.0),
               # No hector-u: no row.
               rec("bgs", "hector-c", 1.0)]
    table = report.ablation(report.summarize(records))
    rows = table[("rgat", "training")]
    assert list(rows) == ["aifb", "mutag"]
    assert rows["aifb"] == {"C": 2.0, "R": 4.0, "C+R": 8.0,
                            "C+R drop-in": None}
    assert rows["mutag"]["C"] is None and rows["mutag"]["R"] == 3.0
    meta = {"device_name": "x", "device": "cpu", "copy_bandwidth_Bps": 1e9,
            "dim": 8, "heads": 1, "scale": 1, "repeats": 10, "warmup": 1,
            "date": "-", "versions": {}}
    text = report.table_md(records, meta)
    assert "## Optimisation ablation (hector.txt Table 5)" in text
    assert "| aifb | 2.00 | 4.00 | 8.00 |  |" in text
    # geomean of R over aifb and mutag: sqrt(4 * 3).
    assert f"| geomean | 2.00 | {12 ** 0.5:.2f} | 8.00 |  |" in text
    # Without hector-u there is no ablation section.
    assert "## Optimisation ablation" not in report.table_md(records[-1:],
                                                             meta)


def test_targets_say_which_goals_a_run_meets():
    """The table's Targets section: each geomean speedup of a (model, mode)
    the run has, each large graph's floor ratio of the best Hector forward,
    and Hector's OOM count, against the project's goals; what the run
    cannot tell is not met, and what it left out is not listed. The
    registered baselines the run has no record of are named below."""
    from hector.bench import report

    def rec(ds, model, mode, system, family, t, ratio=None, status="ok"):
        return {"dataset": ds, "model": model, "mode": mode,
                "system": system, "family": family, "status": status,
                "time_ms": t, "ratio_to_floor": ratio}
    records = [
        # RGCN inference: speedups 4 (aifb) and 1 (mutag), geomean 2 < 3.
        rec("aifb", "rgcn", "inference", "pyg-rgcn", "baseline", 8.0),
        rec("aifb", "rgcn", "inference", "hector", "hector", 2.0, 30.0),
        rec("mutag", "rgcn", "inference", "pyg-rgcn", "baseline", 3.0),
        rec("mutag", "rgcn", "inference", "hector", "hector", 3.0, 9.0),
        # am: the fastest Hector system's ratio counts (3.9 <= 4).
        rec("am", "rgcn", "inference", "pyg-rgcn", "baseline", 20.0,
            status="oom"),
        rec("am", "rgcn", "inference", "hector", "hector", 1.5, 4.2),
        rec("am", "rgcn", "inference", "hector-c", "hector", 1.4, 3.9),
        # mag: no ok Hector record, so no ratio.
        rec("mag", "rgcn", "inference", "hector", "hector", 0, None, "oom"),
        # RGAT training: 30 >= 15.
        rec("aifb", "rgat", "training", "pyg-rgat", "baseline", 30.0),
        rec("aifb", "rgat", "training", "hector", "hector", 1.0, 50.0),
    ]
    rows = report.targets(report.summarize(records), records)
    got = {r["what"]: (r["goal"], r["measured"], r["met"]) for r in rows}
    assert list(got) == [
        "rgcn inference: geomean speedup", "rgat training: geomean speedup",
        "rgcn forward on am: best Hector / DRAM floor",
        "rgcn forward on mag: best Hector / DRAM floor",
        "Hector records out of memory"]
    goal, g, met = got["rgcn inference: geomean speedup"]
    assert goal == ">= 3" and g == pytest.approx(2.0) and not met
    assert got["rgat training: geomean speedup"][1:] == (
        pytest.approx(30.0), True)
    assert got["rgcn forward on am: best Hector / DRAM floor"] == (
        "<= 4", 3.9, True)
    assert got["rgcn forward on mag: best Hector / DRAM floor"] == (
        "<= 4", None, False)
    assert got["Hector records out of memory"] == ("0", 1, False)
    meta = {"device_name": "x", "device": "cpu", "copy_bandwidth_Bps": 1e9,
            "dim": 8, "heads": 1, "scale": 1, "repeats": 10, "warmup": 1,
            "date": "-", "versions": {}}
    text = report.table_md(records, meta)
    assert "The project's targets this run bears on: 2 of 5 met." in text
    assert "| rgcn inference: geomean speedup | >= 3 | 2.00 | **no** |" \
        in text
    assert ("| rgcn forward on am: best Hector / DRAM floor | <= 4 | 3.90 "
            "| yes |") in text
    assert "| Hector records out of memory | 0 | 1 | **no** |" in text
    # The run has pyg-rgcn and pyg-rgat (an OOM record counts as run):
    # the other registered baselines of both models are named.
    missing = report.missing_baselines(records)
    assert missing == {
        "rgcn": ["pyg-rgcn-compile", "pyg-fastrgcn", "pyg-fastrgcn-compile",
                 "segmm-rgcn"],
        "rgat": ["pyg-rgat-compile"]}
    assert ("Baselines with no record in this run (the speedups are "
            "against the others, so they overstate wherever one of these "
            "would have been the fastest): rgcn: pyg-rgcn-compile, "
            "pyg-fastrgcn, pyg-fastrgcn-compile, segmm-rgcn; rgat: "
            "pyg-rgat-compile.") in text
    every = [rec("aifb", "rgat", "inference", name, "baseline", 1.0)
             for name in ("pyg-rgat", "pyg-rgat-compile")]
    assert report.missing_baselines(every) == {}
    assert "Baselines with no record" not in report.table_md(every, meta)


def test_repeats_minimum_enforced(tmp_path):
    with pytest.raises(ValueError, match="repeats"):
        bench.run(_cfg(tmp_path, min_repeats=10), log=_quiet)
    with pytest.raises(SystemExit):
        bench.main(["--repeats", "3", "--device", "cpu"])


def test_floor_formula_rgcn(tmp_path):
    from hector import datasets as hds
    from hector.bench.problem import make_problem

    g = hds.synthetic("aifb", scale=SCALE)
    p = make_problem("aifb", "rgcn", g, 8, 1, "cpu")
    N, E, R, d = g.num_nodes, g.num_edges, g.num_etypes, 8
    w = (R * d * d + d * d + d) * 4
    assert floor_bytes(p, "inference") == 24 * E + 2 * N * d * 4 + w
    assert floor_bytes(p, "training") == 24 * E + 2 * N * d * 4 + 2 * w


def test_cli_subprocess_with_hgt(tmp_path):
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..",
                                        ".."))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(root, "runtime", "python") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, "-m", "hector.bench", "--datasets", "aifb",
           "--models", "hgt,rgcn", "--modes", "inference,training",
           "--systems", "pyg-hgt,pyg-rgcn,hector-interpreter",
           "--scale", str(SCALE), "--device", "cpu", "--repeats", "10",
           "--warmup", "1", "--dim", "16", "--heads", "2",
           "--out", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                          cwd=root, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    recs = _read(tmp_path)
    assert len(recs) == 2 * 2 * 2
    for r in recs:
        assert r["status"] == "ok", r
        assert r["rel_err"] < 1e-4, r
        assert len(r["times_ms"]) == 10
    assert "hector-interpreter" in proc.stdout
    listing = subprocess.run([sys.executable, "-m", "hector.bench",
                              "--list-systems"], capture_output=True,
                             text=True, env=env, cwd=root, timeout=120)
    assert listing.returncode == 0
    assert "segmm-rgcn" in listing.stdout


def _by_case(records):
    return {(r["model"], r["mode"], r["system"]): r for r in records}


def test_hector_matches_pyg_all_models(tmp_path):
    """The `hector` system (hector.nn's drop-ins loading the PyG
    state_dict) and hector-cr (the bundled library on the shared weights)
    pass the correctness check against PyG for every model, with several
    heads, and time both modes."""
    names = ["pyg-rgcn", "pyg-rgat", "pyg-hgt", "hector", "hector-cr"]
    records, _ = bench.run(_cfg(tmp_path, datasets=["aifb"],
                                models=["rgcn", "rgat", "hgt"], dim=16,
                                heads=2, systems=names), log=_quiet)
    by = _by_case(records)
    for model in ("rgcn", "rgat", "hgt"):
        for mode in ("inference", "training"):
            for system in ("hector", "hector-cr"):
                r = by[(model, mode, system)]
                assert r["status"] == "ok", r
                assert r["family"] == "hector"
                assert r["ref_system"] == f"pyg-{model}"
                assert r["rel_err"] is not None and r["rel_err"] < 1e-5, r
                assert len(r["times_ms"]) == 3


def test_hector_training_gradients_match_pyg():
    """A training step of `hector` gives PyG's weight gradients (through
    its own copy of the weights) and hector-cr PyG's on the shared ones."""
    from hector import datasets as hds
    from hector.bench.problem import make_problem

    g = hds.synthetic("mutag", scale=SCALE)
    for model in ("rgcn", "rgat", "hgt"):
        prob = make_problem("mutag", model, g, 8, 2, "cpu")
        grads = {}
        for name in (f"pyg-{model}", "hector", "hector-cr"):
            prep = bench_systems.SYSTEMS[name].prepare(prob)
            for p in prep.params:
                p.grad = None
            loss = torch.nn.functional.mse_loss(prep.forward(), prob.target)
            loss.backward()
            grads[name] = [p.grad.clone() for p in prep.params]
        for name in ("hector", "hector-cr"):
            for n, a, b in zip(prob.weight_names, grads[name],
                               grads[f"pyg-{model}"]):
                err = ((a - b).norm() / b.norm().clamp(min=1e-30)).item()
                assert err < 1e-4, (model, name, n, err)


def _variant_built(model, v):
    """Whether libhector_<model>_pyg_<v>.so is where the variant system
    looks for it."""
    from hector import _ext

    name = f"{model}_pyg_{v}"
    lib = f"libhector_{name}.so"
    vdir = os.path.join(_ext._REPO_ROOT, "bench", "variants", name)
    return any(os.path.isfile(p) for p in (
        os.path.join(_ext.build_dir(), "lib", lib), os.path.join(vdir, lib),
        os.path.join(vdir, "lib", lib),
        os.path.join(vdir, "build", "lib", lib)))


def test_variants_unavailable_when_not_built(tmp_path, monkeypatch):
    """Without their libraries the u, c, r variants are recorded as
    'unavailable' (not failed) and the run goes on."""
    monkeypatch.setenv("HECTOR_BUILD_DIR", str(tmp_path / "no-build"))
    monkeypatch.setattr(bench_systems, "_VARIANT_LIBRARIES", {})
    missing = [v for v in ("u", "c", "r") if not _variant_built("rgcn", v)]
    if not missing:
        pytest.skip("every rgcn variant library is built beside its sources")
    names = ["pyg-rgcn"] + [f"hector-{v}" for v in missing]
    records, out = bench.run(_cfg(tmp_path / "out", datasets=["aifb"],
                                  models=["rgcn"], systems=names),
                             log=_quiet)
    by = _by_case(records)
    for mode in ("inference", "training"):
        assert by[("rgcn", mode, "pyg-rgcn")]["status"] == "ok"
        for v in missing:
            r = by[("rgcn", mode, f"hector-{v}")]
            assert r["status"] == "unavailable", r
            assert "HECTOR_BUILD_BENCH_VARIANTS" in r["error"]
            assert "time_ms" not in r and "traceback" not in r
    with open(os.path.join(out, "table.md")) as f:
        text = f.read()
    assert "n/a" in text
    assert f"{2 * len(missing)} unavailable." in text


@pytest.mark.parametrize("model", ["rgcn", "rgat", "hgt"])
@pytest.mark.parametrize("variant", ["u", "c", "r"])
def test_built_variants_match_pyg(tmp_path, model, variant):
    """Each variant library that is built passes the correctness check
    against PyG and times both modes."""
    if not _variant_built(model, variant):
        pytest.skip(f"libhector_{model}_pyg_{variant}.so is not built "
                    "(-DHECTOR_BUILD_BENCH_VARIANTS=ON)")
    name = f"hector-{variant}"
    records, _ = bench.run(_cfg(tmp_path, datasets=["aifb"], models=[model],
                                dim=16, heads=2,
                                systems=[f"pyg-{model}", name]), log=_quiet)
    for mode in ("inference", "training"):
        r = _by_case(records)[(model, mode, name)]
        assert r["status"] == "ok", r
        assert r["rel_err"] < 1e-5, r


def test_variant_libraries_have_their_own_namespaces():
    """bench/variants/ holds u, c, r of every *_pyg model, each renamed so
    its op namespace differs from the bundled one's."""
    from hector import _ext
    for model in ("rgcn", "rgat", "hgt"):
        for v in ("u", "c", "r"):
            name = f"{model}_pyg_{v}"
            path = os.path.join(_ext._REPO_ROOT, "bench", "variants", name,
                                "layer.json")
            with open(path) as f:
                info = json.load(f)
            assert info["model"] == name
            assert info["library"] == f"hector_{name}"
            bundled = os.path.join(_ext._REPO_ROOT, "generated",
                                   f"{model}_pyg", "layer.json")
            with open(bundled) as f:
                ref = json.load(f)
            assert info["arguments"] == ref["arguments"]
            assert info["hypers"] == ref["hypers"]


def test_merge_reads_progress_logs_and_jsonl(tmp_path, full_run):
    """hector.bench.merge: a progress log gives back the run's records
    (status, time to the printed precision, floor ratio, peak, rel err),
    and merging it with a results.jsonl keeps the last record per case."""
    from hector.bench import merge

    records, out_dir, lines = full_run
    log = tmp_path / "run.progress.log"
    log.write_text("\n".join(lines) + "\n")
    meta, parsed = merge.read_progress_log(log.read_text().splitlines())
    assert meta["dim"] == records[0]["dim"]
    assert len(parsed) == len(records)
    for p, r in zip(parsed, records):
        for k in ("dataset", "model", "mode", "system", "status", "family"):
            assert p[k] == r[k], (k, p, r)
        assert p["num_edges"] == r["num_edges"]
        if r["status"] == "ok":
            assert abs(p["time_ms"] - r["time_ms"]) <= 5e-4 + 1e-9
            assert abs(p["ratio_to_floor"] - r["ratio_to_floor"]) <= \
                0.05 + 1e-3 * r["ratio_to_floor"]
            assert p["floor_ms"] > 0
        if r.get("rel_err") is not None:
            assert p["rel_err"] == pytest.approx(r["rel_err"], rel=0.06,
                                                 abs=1e-12)
    # Merge: the log, then the jsonl of the same run (which wins).
    out = tmp_path / "merged"
    assert merge.main([str(out), str(log),
                       os.path.join(out_dir, "results.jsonl"),
                       "--no-chart"]) == 0
    merged = _read(str(out))
    assert len(merged) == len(records)
    assert all("source" not in r for r in merged)
    with open(out / "meta.json") as f:
        m = json.load(f)
    assert [s["records"] for s in m["merged_from"]] == [len(records)] * 2
    # Each input's host, from the log's host line and from the jsonl's
    # meta.json.
    hosts = [s["host"] for s in m["merged_from"]]
    assert hosts[0]["cpus"] == hosts[1]["cpus"] == os.cpu_count()
    assert hosts[0]["step_floor_ms"] == pytest.approx(
        hosts[1]["step_floor_ms"], abs=5e-4)
    assert (out / "table.md").read_text().startswith("# hector.bench")
    bad = tmp_path / "bad.log"
    bad.write_text("nothing here\n")
    with pytest.raises(ValueError, match="no benchmark records"):
        merge.merge([str(bad)])


def test_profile_prints_kernels_and_busy_line(tmp_path, capsys):
    from hector.bench import profile

    assert profile.main(["--datasets", "aifb", "--models", "rgcn",
                         "--systems", "pyg-rgcn", "--modes", "training",
                         "--device", "cpu", "--scale", str(SCALE),
                         "--dim", "8", "--steps", "2", "--warmup", "1",
                         "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "== aifb-rgcn-pyg-rgcn-training" in out
    assert "aten::" in out
    assert "(median of 2); no device time on cpu" in out
    with open(tmp_path / "aifb-rgcn-pyg-rgcn-training.txt") as f:
        assert "no device time on cpu" in f.read()


def test_profile_sorts_by_host_time_and_writes_traces(tmp_path, capsys):
    from hector.bench import profile

    assert profile.main(["--datasets", "aifb", "--models", "rgcn",
                         "--systems", "pyg-rgcn", "--modes", "inference",
                         "--device", "cpu", "--scale", str(SCALE),
                         "--dim", "8", "--steps", "2", "--warmup", "1",
                         "--sort", "host", "--trace",
                         "--out", str(tmp_path)]) == 0
    assert "== aifb-rgcn-pyg-rgcn-inference" in capsys.readouterr().out
    with open(tmp_path / "aifb-rgcn-pyg-rgcn-inference.trace.json") as f:
        trace = json.load(f)
    # {"traceEvents": [...]}, or the bare list of older torch releases.
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    assert any(e.get("name", "").startswith("aten::") for e in events)


def test_throughput_prints_one_line_per_case(capsys):
    from hector.bench import throughput

    assert throughput.main(["--datasets", "aifb", "--models", "rgcn,rgat",
                            "--systems", "pyg-rgcn", "--device", "cpu",
                            "--scale", str(SCALE), "--dim", "8",
                            "--steps", "2", "--warmup", "1",
                            "--tag", "A"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    # pyg-rgcn runs RGCN only: its two modes.
    assert [x["case"] for x in lines] == ["aifb-rgcn-inference",
                                          "aifb-rgcn-training"]
    assert all(x["tag"] == "A" and x["system"] == "pyg-rgcn" and
               x["ms"] > 0 and x["tf32"] is False for x in lines)
    with pytest.raises(SystemExit):
        throughput.main(["--systems", "no-such-system"])


# One small case for the tools that take hector.bench.cases' arguments:
# aifb RGCN inference by pyg-rgcn on the CPU, a warm-up step and two more.
ONE_CPU_INFERENCE = ["--datasets", "aifb", "--models", "rgcn", "--systems",
                     "pyg-rgcn", "--device", "cpu", "--scale", str(SCALE),
                     "--dim", "8", "--modes", "inference", "--steps", "2",
                     "--warmup", "1"]


def spy_on_tf32(monkeypatch):
    """runner._step wrapped so that each call of a step records whether
    TF32 matmuls were allowed then; returns the list it appends to."""
    from hector.bench import runner

    seen = []
    step = runner._step

    def spying_step(prepared, prob, mode):
        fn = step(prepared, prob, mode)

        def timed():
            seen.append(torch.backends.cuda.matmul.allow_tf32)
            return fn()
        return timed

    monkeypatch.setattr(runner, "_step", spying_step)
    return seen


def test_throughput_tf32_allows_tf32_only_while_it_times(capsys,
                                                         monkeypatch):
    from hector.bench import throughput

    seen = spy_on_tf32(monkeypatch)
    before = torch.backends.cuda.matmul.allow_tf32
    assert throughput.main(ONE_CPU_INFERENCE + ["--tf32"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["tf32"] for x in lines] == [True]
    # Every timed call (1 warm-up, 2 steps) ran with TF32 allowed, and the
    # flag is what it was afterwards.
    assert seen == [True, True, True]
    assert torch.backends.cuda.matmul.allow_tf32 == before


def test_profile_tf32_allows_tf32_only_while_it_profiles(tmp_path, capsys,
                                                         monkeypatch):
    from hector.bench import profile

    seen = spy_on_tf32(monkeypatch)
    before = torch.backends.cuda.matmul.allow_tf32
    assert profile.main(ONE_CPU_INFERENCE + ["--tf32"]) == 0
    assert "== aifb-rgcn-pyg-rgcn-inference" in capsys.readouterr().out
    # The profiled steps and the busy line's timed steps all ran with TF32.
    assert seen and all(seen)
    assert torch.backends.cuda.matmul.allow_tf32 == before


def test_compare_takes_each_tags_best_round(tmp_path, capsys):
    from hector.bench import compare

    def rec(tag, case, ms):
        return json.dumps({"tag": tag, "case": case, "system": "hector",
                           "ms": ms})

    path = tmp_path / "tp.jsonl"
    path.write_text("\n".join([
        rec("old", "am-rgcn-inference", 4.0), rec("new", "am-rgcn-inference",
                                                  2.5),
        rec("old", "am-rgcn-inference", 3.0),  # the old build's better round
        rec("new", "am-rgcn-inference", 2.0),
        rec("new", "mag-rgcn-inference", 1.0),  # no baseline: left out
        ""]))
    assert compare.main([str(path), "--baseline", "old"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1
    assert out[0].split()[:3] == ["am-rgcn-inference", "hector", "old"]
    assert float(out[0].split()[3]) == 3.0
    assert "new     2.000 (1.500x)" in out[0]
    best = compare.best_times(path.read_text().splitlines())
    assert best[("am-rgcn-inference", "hector")] == {"old": (3.0, 2),
                                                      "new": (2.0, 2)}


def test_compare_rejects_other_lines_and_a_missing_baseline(tmp_path):
    from hector.bench import compare

    path = tmp_path / "tp.jsonl"
    path.write_text('{"tag": "a", "case": "x", "ms": 1}\nnot json\n')
    with pytest.raises(ValueError, match="line 2"):
        compare.best_times(path.read_text().splitlines())
    with pytest.raises(SystemExit):
        compare.main([str(path), "--baseline", "a"])
    path.write_text('{"tag": "a", "case": "x", "ms": 1}\n')
    with pytest.raises(SystemExit):
        compare.main([str(path), "--baseline", "b"])


def test_profile_input_grad_computes_the_features_gradient(tmp_path, capsys):
    from hector.bench import profile

    args = ["--datasets", "aifb", "--models", "rgcn", "--systems",
            "pyg-rgcn", "--modes", "training", "--device", "cpu",
            "--scale", str(SCALE), "--dim", "8", "--steps", "1",
            "--warmup", "0", "--rows", "200", "--out", str(tmp_path)]
    assert profile.main(args) == 0
    plain = capsys.readouterr().out
    assert profile.main(args + ["--input-grad"]) == 0
    with_grad = capsys.readouterr().out
    assert "== aifb-rgcn-pyg-rgcn-training-input-grad" in with_grad
    assert (tmp_path / "aifb-rgcn-pyg-rgcn-training-input-grad.txt").exists()
    # One gradient accumulation per leaf: RGCN's 3 parameters, and the
    # features with --input-grad (the last column is the call count).
    def accumulations(text):
        row = next(line for line in text.splitlines()
                   if line.strip().startswith("torch::autograd::AccumulateGrad"))
        return int(row.split()[-1])
    assert accumulations(plain) == 3
    assert accumulations(with_grad) == 4


def test_device_busy_is_kernel_time_over_step_time():
    from hector.bench.profile import device_busy

    from torch.autograd import DeviceType

    class Event:
        def __init__(self, us, device_type=DeviceType.CUDA, key="kernel"):
            self.self_device_time_total = us
            self.device_type = device_type
            self.key = key

    class Prof:
        def key_averages(self):
            # The CPU op that launched the kernels carries their time too,
            # and the profiler's buffer requests are its own.
            return [Event(3000.0), Event(1000.0), Event(0.0),
                    Event(4000.0, DeviceType.CPU),
                    Event(500.0, key="Activity Buffer Request")]
    # 4 ms of kernels over 2 steps: 2 ms per step of an 8 ms step.
    assert device_busy(Prof(), 8.0, 2) == (2.0, 0.25)


def test_host_split_times_each_phase_of_the_harness_step():
    """hector.bench.host_split: the phases of runner._step's step, each a
    median of non-negative host times; the training step clears, runs the
    forward, the loss and the backward (the parameter gets its gradient),
    as runner._step's does."""
    from types import SimpleNamespace

    from hector.bench import host_split
    from hector.bench.systems import Prepared

    w = torch.nn.Parameter(torch.ones(4, 3))
    x = torch.arange(8.0).view(2, 4)
    calls = []

    def forward():
        calls.append(torch.is_grad_enabled())
        return x @ w
    prepared = Prepared(forward=forward, params=[w])
    prob = SimpleNamespace(target=torch.zeros(2, 3))
    cpu = torch.device("cpu")
    ms = host_split.split(prepared, prob, "training", cpu, steps=3, warmup=1)
    assert set(ms) == {"clear", "forward", "loss", "backward", "wait",
                       "step"}
    assert all(v >= 0 for v in ms.values()) and ms["step"] > 0
    assert calls == [True] * 4
    # d/dw of mean((x w)^2) = 2 x^T (x w) / 6.
    assert torch.allclose(w.grad, x.t() @ (x @ w) / 3)
    ms = host_split.split(prepared, prob, "inference", cpu, steps=2,
                          warmup=0)
    assert set(ms) == {"forward", "wait", "step"}
    assert calls[-2:] == [False, False]
    line = host_split.format_split("t", ms, "inference")
    assert line.startswith("t: step ") and " forward " in line


def test_host_split_prints_one_line_per_case(capsys):
    from hector.bench import host_split

    assert host_split.main(ONE_CPU_INFERENCE) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1
    assert out[0].startswith("aifb-rgcn-pyg-rgcn-inference: step ")
    with pytest.raises(SystemExit):
        host_split.main(ONE_CPU_INFERENCE + ["--modes", "sideways"])


def _rows_of(mask):
    from types import SimpleNamespace
    return bench_systems._output_rows(SimpleNamespace(row_mask=mask))


def test_output_rows_take_a_view_of_one_run_and_gather_several():
    h = torch.arange(24.0).reshape(8, 3)
    # Every row, or no mask: the output itself.
    assert _rows_of(None)(h) is h
    assert _rows_of(torch.ones(8, dtype=torch.bool))(h) is h
    # One run of rows (destination types numbered together): a view.
    one = torch.zeros(8, dtype=torch.bool)
    one[2:6] = True
    got = _rows_of(one)(h)
    assert torch.equal(got, h[one])
    assert got.data_ptr() == h[2].data_ptr() and got.is_contiguous()
    # Two runs: the same rows as the mask picks, in order.
    two = torch.zeros(8, dtype=torch.bool)
    two[[0, 1, 5, 7]] = True
    assert torch.equal(_rows_of(two)(h), h[two])
    # One row alone.
    single = torch.zeros(8, dtype=torch.bool)
    single[4] = True
    assert torch.equal(_rows_of(single)(h), h[4:5])
    # No row at all.
    assert _rows_of(torch.zeros(8, dtype=torch.bool))(h).shape == (0, 3)

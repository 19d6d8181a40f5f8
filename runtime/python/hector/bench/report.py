"""Writes results.jsonl, table.md and chart.png."""

import json
import math
import os
import re
from collections import OrderedDict

__all__ = ["write_all", "summarize", "geomean", "ablation", "targets",
           "host_line", "parse_host_line"]

# The ablation systems (bench/variants) and the column each gives in the
# table of hector.txt Table 5: its speedup over the unoptimised hector-u.
# 'hector' (the hector.nn drop-in) runs C+R's kernels behind the drop-in
# layer's argument handling.
ABLATION = OrderedDict([("hector-c", "C"), ("hector-r", "R"),
                        ("hector-cr", "C+R"), ("hector", "C+R drop-in")])


# The project's performance targets (docs/perf-notes.md, issue 9): the
# geometric mean over datasets of best baseline / best Hector time, per
# (model, mode); the best Hector forward (inference) within a multiple of
# the DRAM floor on the three large graphs; and no Hector system out of
# memory.
SPEEDUP_TARGETS = OrderedDict([
    (("rgcn", "inference"), 3), (("rgat", "inference"), 12),
    (("hgt", "inference"), 5), (("rgcn", "training"), 4),
    (("rgat", "training"), 15), (("hgt", "training"), 10)])
FLOOR_TARGETS = OrderedDict([("rgcn", 4), ("rgat", 8), ("hgt", 8)])
FLOOR_DATASETS = ("am", "mag", "wikikg2")


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def _best(recs, family):
    ok = [r for r in recs if r["family"] == family and r["status"] == "ok"]
    return min(ok, key=lambda r: r["time_ms"]) if ok else None


def summarize(records):
    """{(model, mode): OrderedDict(dataset -> dict(best_hector, best_baseline,
    speedup, systems={name: record}))} in the order the records came."""
    out = OrderedDict()
    for r in records:
        key = (r["model"], r["mode"])
        row = out.setdefault(key, OrderedDict()).setdefault(
            r["dataset"], {"systems": OrderedDict()})
        row["systems"][r["system"]] = r
    for rows in out.values():
        for row in rows.values():
            recs = list(row["systems"].values())
            h, b = _best(recs, "hector"), _best(recs, "baseline")
            row["best_hector"], row["best_baseline"] = h, b
            row["speedup"] = (b["time_ms"] / h["time_ms"]
                              if h and b and h["time_ms"] > 0 else None)
    return out


def ablation(summ):
    """{(model, mode): OrderedDict(dataset -> {column: speedup or None})}
    for the (model, mode) pairs where hector-u and at least one other
    ablation system ran: speedup = hector-u's time / the system's."""
    out = OrderedDict()
    for key, rows in summ.items():
        table = OrderedDict()
        for ds, row in rows.items():
            u = row["systems"].get("hector-u")
            if not u or u["status"] != "ok":
                continue
            cells = OrderedDict()
            for name, col in ABLATION.items():
                r = row["systems"].get(name)
                cells[col] = (u["time_ms"] / r["time_ms"]
                              if r and r["status"] == "ok" and
                              r["time_ms"] > 0 else None)
            if any(v is not None for v in cells.values()):
                table[ds] = cells
        if table:
            out[key] = table
    return out


def targets(summ, records):
    """The targets this run's records bear on, in SPEEDUP_TARGETS' and
    FLOOR_TARGETS' order, each a dict(what, goal, measured, met): the
    geometric-mean speedups (of the datasets with both sides), the floor
    ratios of the best Hector forward on FLOOR_DATASETS, and the Hector
    records out of memory. A target whose value this run cannot give (no
    dataset with both sides; no ok Hector inference on the dataset) has
    measured None and met False; a (model, mode) or dataset the run left
    out is not listed."""
    out = []
    for (model, mode), goal in SPEEDUP_TARGETS.items():
        rows = summ.get((model, mode))
        if rows is None:
            continue
        g = geomean([row["speedup"] for row in rows.values()])
        out.append({"what": f"{model} {mode}: geomean speedup",
                    "goal": f">= {goal}", "measured": g,
                    "met": g is not None and g >= goal})
    for model, goal in FLOOR_TARGETS.items():
        rows = summ.get((model, "inference"), {})
        for ds in FLOOR_DATASETS:
            if ds not in rows:
                continue
            h = rows[ds]["best_hector"]
            ratio = h.get("ratio_to_floor") if h else None
            out.append({"what": f"{model} forward on {ds}: best Hector / "
                                f"DRAM floor",
                        "goal": f"<= {goal}", "measured": ratio,
                        "met": ratio is not None and ratio <= goal})
    hector = [r for r in records if r.get("family") == "hector"]
    if hector:
        ooms = sum(1 for r in hector if r["status"] == "oom")
        out.append({"what": "Hector records out of memory", "goal": "0",
                    "measured": ooms, "met": ooms == 0})
    return out


def missing_baselines(records):
    """For each model the records have, in their order: the registered
    baselines of the model (systems.SYSTEMS) that have no record in the
    run, in registry order; models that miss none are left out. A speedup
    is against the baselines a run has, so without one that would have
    been faster it overstates."""
    from .systems import SYSTEMS  # imports torch: only when tables are made
    ran = {(r["model"], r["system"]) for r in records}
    out = OrderedDict()
    for model in OrderedDict.fromkeys(r["model"] for r in records):
        missing = [s.name for s in SYSTEMS.values()
                   if s.family == "baseline" and model in s.models
                   and (model, s.name) not in ran]
        if missing:
            out[model] = missing
    return out


def _targets_md(summ, records):
    rows = targets(summ, records)
    if not rows:
        return []
    met = sum(1 for r in rows if r["met"])
    lines = ["## Targets", "",
             f"The project's targets this run bears on: {met} of "
             f"{len(rows)} met.", "",
             "| target | goal | measured | met |", "|---|---|---|---|"]
    for r in rows:
        m = r["measured"]
        text = ("-" if m is None else str(m) if isinstance(m, int)
                else f"{m:.2f}")
        lines.append(f"| {r['what']} | {r['goal']} | {text} | "
                     f"{'yes' if r['met'] else '**no**'} |")
    lines.append("")
    missing = missing_baselines(records)
    if missing:
        lines += ["Baselines with no record in this run (the speedups are "
                  "against the others, so they overstate wherever one of "
                  "these would have been the fastest): " + "; ".join(
                      f"{m}: {', '.join(names)}"
                      for m, names in missing.items()) + ".", ""]
    return lines


def _ablation_md(summ):
    tables = ablation(summ)
    if not tables:
        return []
    lines = ["## Optimisation ablation (hector.txt Table 5)", "",
             "Speedup of each variant over hector-u (no compaction, no "
             "reordering; loop fusion is on in all of them): C = compact "
             "materialization (hector-c), R = linear operator reordering "
             "(hector-r), C+R = both (hector-cr); C+R drop-in = the "
             "hector.nn layer on C+R's kernels (hector). Blank: not run or "
             "not ok.", ""]
    cols = list(ABLATION.values())
    for (model, mode), table in tables.items():
        lines.append(f"### {model} {mode}")
        lines.append("")
        lines.append("| dataset | " + " | ".join(cols) + " |")
        lines.append("|---|" + "---|" * len(cols))
        for ds, cells in table.items():
            lines.append(f"| {ds} | " + " | ".join(
                f"{cells[c]:.2f}" if cells[c] is not None else ""
                for c in cols) + " |")
        geo = [geomean([cells[c] for cells in table.values()]) for c in cols]
        lines.append("| geomean | " + " | ".join(
            f"{g:.2f}" if g else "" for g in geo) + " |")
        lines.append("")
    return lines


def _cell(r):
    if r is None:
        return ""
    if r["status"] == "ok":
        t = r["time_ms"]
        return f"{t:.3g}" if t < 100 else f"{t:.0f}"
    return {"oom": "OOM", "failed": "fail", "unavailable": "n/a",
            "timeout": "slow"}.get(
        r["status"], r["status"])


def host_line(host):
    """The progress log's line for meta["host"] (parse_host_line reads it
    back)."""
    return (f"host: {host['cpu']} ({host['cpus']} CPUs); smallest training "
            f"step {host['step_floor_ms']:.3f} ms")


_HOST_LINE = re.compile(r"^host: (?P<cpu>.*) \((?P<cpus>\d+) CPUs\); smallest "
                        r"training step (?P<ms>[0-9.]+) ms$")


def parse_host_line(line):
    """meta["host"] from a host_line, or None for any other line."""
    m = _HOST_LINE.match(line)
    if not m:
        return None
    return {"cpu": m["cpu"], "cpus": int(m["cpus"]),
            "step_floor_ms": float(m["ms"])}


def _host_sentence(meta):
    # Older runs' meta has no host.
    host = meta.get("host")
    if not host:
        return ""
    text = (f"host CPU {host['cpu']} ({host['cpus']} CPUs), smallest "
            f"training step (loss and backward of a 64 x 64 leaf: "
            f"PyTorch's own cost in every step) "
            f"{host['step_floor_ms']:.3f} ms; ")
    # A merge of runs, maybe from several machines: the step floors they
    # had.
    floors = sorted({s["host"]["step_floor_ms"]
                     for s in meta.get("merged_from", []) if s.get("host")})
    if len(floors) > 1:
        text += (f"merged from runs whose smallest training step took "
                 f"{floors[0]:.3f} to {floors[-1]:.3f} ms; ")
    return text


def table_md(records, meta):
    lines = ["# hector.bench results", ""]
    lines.append(f"Device: {meta['device_name']} ({meta['device']}); "
                 f"device-to-device copy bandwidth "
                 f"{meta['copy_bandwidth_Bps'] / 1e9:.1f} GB/s; "
                 + _host_sentence(meta) + "dim "
                 f"{meta['dim']}, heads {meta['heads']}, scale "
                 f"{meta['scale']}; median of {meta['repeats']} runs after "
                 f"{meta['warmup']} warm-up; "
                 # Older runs' meta has no tf32: they ran without it.
                 + ("TF32 matmuls allowed (--tf32); " if meta.get("tf32")
                    else "fp32 matmuls; ")
                 # Kernel switches set for the run (older runs: none).
                 + "".join(f"{k}={v}; " for k, v in
                           meta.get("environment", {}).items())
                 + f"{meta['date']}; "
                 + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()))
    lines.append("")
    lines.append("Times in ms. OOM: out of memory; fail: error (see "
                 "results.jsonl); n/a: the system's library is not built "
                 "here. Speedup = best baseline / best Hector system. "
                 "Hector systems: 'hector' is hector.nn's PyG drop-in "
                 "(all optimisations); hector-u / -c / -r / -cr the "
                 "optimisation ablation (unoptimised, compact, reorder, "
                 "both); 'hector-interpreter' is the IR interpreter "
                 "(reference lowering, torch ops), not the compiled "
                 "kernels: it is timed but counts on neither side. Floor x: "
                 "best Hector time / DRAM floor (bytes that must move / "
                 "copy bandwidth). rel err: 'hector' (else "
                 "hector-interpreter) vs the PyG reference output.")
    lines.append("")
    summ = summarize(records)
    geo = []
    for (model, mode), rows in summ.items():
        names = []
        for row in rows.values():
            for n in row["systems"]:
                if n not in names:
                    names.append(n)
        lines.append(f"## {model} {mode}")
        lines.append("")
        head = ["dataset"] + names + ["best baseline", "best Hector",
                                      "speedup", "floor x", "rel err"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for ds, row in rows.items():
            h, b = row["best_hector"], row["best_baseline"]
            ri = row["systems"].get("hector") or \
                row["systems"].get("hector-interpreter")
            rel = ri.get("rel_err") if ri else None
            cells = [ds] + [_cell(row["systems"].get(n)) for n in names]
            cells += [b["system"] if b else "-", h["system"] if h else "-",
                      f"{row['speedup']:.2f}" if row["speedup"] else "-",
                      f"{h['ratio_to_floor']:.1f}" if h and
                      h.get("ratio_to_floor") else "-",
                      f"{rel:.1e}" if rel is not None else "-"]
            lines.append("| " + " | ".join(cells) + " |")
        g = geomean([row["speedup"] for row in rows.values()])
        n = sum(1 for row in rows.values() if row["speedup"])
        geo.append((model, mode, g, n))
        lines.append("")
        lines.append(f"Geometric mean speedup ({model} {mode}, {n} "
                     f"datasets with both sides): "
                     + (f"{g:.2f}" if g else "-"))
        lines.append("")
    lines.append("## Geometric means")
    lines.append("")
    lines.append("| model | mode | geomean speedup | datasets |")
    lines.append("|---|---|---|---|")
    for model, mode, g, n in geo:
        lines.append(f"| {model} | {mode} | {f'{g:.2f}' if g else '-'} | "
                     f"{n} |")
    lines.append("")
    lines.extend(_targets_md(summ, records))
    lines.extend(_ablation_md(summ))
    ooms = sum(1 for r in records if r["status"] == "oom")
    fails = sum(1 for r in records if r["status"] == "failed")
    unavailable = sum(1 for r in records if r["status"] == "unavailable")
    slow = sum(1 for r in records if r["status"] == "timeout")
    lines.append(f"{len(records)} cases: {ooms} OOM, {fails} failed, "
                 f"{slow} over the case or prepare timeout (\"slow\"), "
                 f"{unavailable} unavailable.")
    lines.append("")
    return "\n".join(lines)


def chart(records, path):
    """Figure 8 style: per mode, grouped bars of speedup (best baseline /
    best Hector) per dataset, one bar per model, log scale. Returns a
    message when it cannot draw (matplotlib missing)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not importable: chart.png skipped"
    summ = summarize(records)
    modes = []
    models = []
    datasets = []
    for (model, mode), rows in summ.items():
        if mode not in modes:
            modes.append(mode)
        if model not in models:
            models.append(model)
        for ds in rows:
            if ds not in datasets:
                datasets.append(ds)
    fig, axes = plt.subplots(len(modes), 1, figsize=(max(6, 1.3 *
                             len(datasets) * max(1, len(models)) / 2), 3.2 *
                             len(modes)), squeeze=False)
    width = 0.8 / max(1, len(models))
    for ax, mode in zip(axes[:, 0], modes):
        for i, model in enumerate(models):
            rows = summ.get((model, mode), {})
            xs, ys, oom = [], [], []
            for j, ds in enumerate(datasets):
                row = rows.get(ds)
                x = j + (i - (len(models) - 1) / 2) * width
                if row and row["speedup"]:
                    xs.append(x)
                    ys.append(row["speedup"])
                elif row:
                    # Only Hector ran (every baseline OOM or failed): "H";
                    # otherwise no Hector result: "x".
                    oom.append((x, "H" if row["best_hector"] else "x"))
            ax.bar(xs, ys, width, label=model.upper())
            for x, mark in oom:
                ax.text(x, 1.0, mark, ha="center", va="bottom", fontsize=8)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(datasets)))
        ax.set_xticklabels(datasets)
        ax.set_ylabel("speedup vs best baseline")
        ax.set_title(f"{mode} (H: only Hector ran, every baseline OOM or "
                     f"failed; x: no Hector result)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return None


def record_line(rec):
    """One record as a line of results.jsonl."""
    return json.dumps(rec, default=str) + "\n"


def write_meta(meta, out_dir):
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2, default=str)


def write_all(records, meta, out_dir, chart=True, log=print):
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "results.jsonl"), "w") as f:
        for r in records:
            f.write(record_line(r))
    write_meta(meta, out_dir)
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(table_md(records, meta))
    msg = None
    if chart:
        try:
            msg = globals()["chart"](records, os.path.join(out_dir,
                                                           "chart.png"))
        except Exception as exc:  # noqa: BLE001
            msg = f"chart.png failed: {type(exc).__name__}: {exc}"
    if msg:
        log(msg)
    log(f"wrote {out_dir}/results.jsonl, table.md"
        + ("" if msg or not chart else ", chart.png"))

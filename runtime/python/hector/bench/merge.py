"""Merges the results of several hector.bench runs into one table
(python -m hector.bench.merge OUT INPUT...).

A GPU session's calls are limited in time, so one benchmark is run as
several (`--datasets` subsets). Each INPUT is a run's results.jsonl or, for
a run that was cut before it wrote one, its progress log (the lines
hector.bench prints, e.g. scripts/gpu-bench.sh's bench.log). Records read
from a log carry what the line shows (status, median time, ratio to the
DRAM floor, peak memory, relative error, the error message) and
"source": "progress-log"; their floor time is recovered as time / ratio.
A case found in several inputs keeps its last record; every record's
family is the one the system registry gives today. OUT gets
results.jsonl, meta.json (each setting from the first input that has it,
and the inputs listed in merged_from with each one's host), table.md and
chart.png, as a single run writes them; the table's header gives the
spread of the inputs' smallest training steps when they differ. A
results.jsonl's settings are read from the meta.json beside it
(X.meta.json for X.results.jsonl).
"""

import argparse
import json
import os
import re
import sys

from . import report
from .systems import SYSTEMS

__all__ = ["read_progress_log", "read_records", "merge", "main"]

_HEADER = re.compile(
    r"^hector\.bench on (?P<name>.+) \((?P<device>[^)]+)\); copy bandwidth "
    r"(?P<bw>[0-9.]+) GB/s; dim (?P<dim>\d+), heads (?P<heads>\d+), scale "
    r"(?P<scale>[0-9.eE+-]+);")
_GRAPH = re.compile(
    r"^-- (?P<ds>\w+): (?P<n>\d+) nodes \((?P<t>\d+) types\), (?P<e>\d+) "
    r"edges \((?P<r>\d+) relations\)")
_CASE = re.compile(
    r"^\[\s*\d+\] (?P<ds>\S+)\s+(?P<model>\S+)\s+(?P<mode>inference|training)"
    r"\s+(?P<system>\S+)\s+(?P<rest>.*)$")
_OK = re.compile(
    r"^(?P<t>[0-9.]+) ms\s+floor x(?P<ratio>[0-9.]+)\s+peak (?P<peak>[0-9.]+|-)"
    r"(?: MiB)?")
_ERR = re.compile(r"\s+rel_err (?P<rel>[0-9.eE+-]+)$")
_STATUS = {"OOM": "oom", "FAILED": "failed", "TIMEOUT": "timeout",
           "UNAVAILABLE": "unavailable"}


def read_progress_log(lines):
    """(meta, records) from a hector.bench progress log."""
    meta, graphs, records = {}, {}, []
    for line in lines:
        line = line.rstrip("\n")
        m = _HEADER.match(line)
        if m:
            meta = {"device_name": m["name"], "device": m["device"],
                    "copy_bandwidth_Bps": float(m["bw"]) * 1e9,
                    "dim": int(m["dim"]), "heads": int(m["heads"]),
                    "scale": float(m["scale"])}
            continue
        host = report.parse_host_line(line)
        if host:
            meta["host"] = host
            continue
        m = _GRAPH.match(line)
        if m:
            graphs[m["ds"]] = {"num_nodes": int(m["n"]),
                               "num_ntypes": int(m["t"]),
                               "num_edges": int(m["e"]),
                               "num_etypes": int(m["r"])}
            continue
        m = _CASE.match(line)
        if m:
            records.append(_case(m, meta, graphs))
    return meta, records


def _case(m, meta, graphs):
    system = m["system"]
    rec = {"dataset": m["ds"], "model": m["model"], "mode": m["mode"],
           "system": system,
           "family": SYSTEMS[system].family if system in SYSTEMS
           else "baseline",
           "dim": meta.get("dim"), "heads": meta.get("heads"),
           "scale": meta.get("scale"), "device": meta.get("device"),
           "device_name": meta.get("device_name"),
           "source": "progress-log"}
    rec.update(graphs.get(m["ds"], {}))
    rest = m["rest"]
    e = _ERR.search(rest)
    rec["rel_err"] = float(e["rel"]) if e else None
    if e:
        rest = rest[:e.start()]
    ok = _OK.match(rest)
    if ok:
        t, ratio = float(ok["t"]), float(ok["ratio"])
        rec.update(status="ok", time_ms=t, ratio_to_floor=ratio,
                   floor_ms=t / ratio if ratio > 0 else None)
        if ok["peak"] != "-":
            rec["peak_mem_bytes"] = int(float(ok["peak"]) * 2**20)
        return rec
    word, _, msg = rest.partition(":")
    if word.strip() not in _STATUS:
        raise ValueError(f"unrecognised progress line for {system}: {rest!r}")
    rec["status"] = _STATUS[word.strip()]
    rec["error"] = msg.strip()
    return rec


def _read(path):
    with open(path) as f:
        if path.endswith(".jsonl"):
            recs = [json.loads(line) for line in f if line.strip()]
            # X.results.jsonl's settings are X.meta.json, or the folder's
            # meta.json (as a run writes them).
            meta = {}
            for meta_path in (path[:-len("results.jsonl")] + "meta.json",
                              os.path.join(os.path.dirname(path),
                                           "meta.json")):
                if path.endswith("results.jsonl") and \
                        os.path.exists(meta_path):
                    with open(meta_path) as m:
                        meta = json.load(m)
                    break
            return meta, recs
        return read_progress_log(f)


def read_records(path):
    """The records of one results.jsonl or progress log."""
    return _read(path)[1]


def merge(inputs):
    """(meta, records): the inputs' records, the last one of each case."""
    cases, meta, sources = {}, None, []
    for path in inputs:
        m, recs = _read(path)
        if not recs:
            raise ValueError(f"{path}: no benchmark records")
        # Each input's host too: a merge may join runs from machines that
        # differ in it, and the table's header names only the first's.
        sources.append({"path": path, "records": len(recs),
                        "date": m.get("date"), "host": m.get("host")})
        # Settings: the first input that has each one.
        meta = dict(m) if meta is None else {**m, **meta}
        for r in recs:
            # The family is the registry's today (older runs counted the
            # interpreter as a Hector system).
            if r["system"] in SYSTEMS:
                r["family"] = SYSTEMS[r["system"]].family
            cases[(r["dataset"], r["model"], r["mode"], r["system"])] = r
    meta = dict(meta or {})
    meta.setdefault("repeats", "?")
    meta.setdefault("warmup", "?")
    meta.setdefault("date", "?")
    meta.setdefault("versions", {})
    meta["merged_from"] = sources
    return meta, list(cases.values())


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m hector.bench.merge",
                                description=__doc__.splitlines()[0])
    p.add_argument("out", help="output folder")
    p.add_argument("inputs", nargs="+",
                   help="results.jsonl files or progress logs")
    p.add_argument("--no-chart", action="store_true")
    args = p.parse_args(argv)
    meta, records = merge(args.inputs)
    report.write_all(records, meta, args.out, chart=not args.no_chart)
    return 0


if __name__ == "__main__":
    sys.exit(main())

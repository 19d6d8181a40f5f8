"""Side-by-side step times of builds (python -m hector.bench.compare).

Reads the JSON lines of hector.bench.throughput runs ({"tag", "case",
"system", "ms"}; several runs may share a file, a tag per build, and a tag
may have several rounds) and prints one line per (case, system): each
tag's best round and its speedup over the baseline tag, as
`baseline ms / tag ms` (above 1: faster than the baseline). The best round,
not the mean: on a GPU the slower rounds are the ones the host or another
process disturbed (docs/perf-notes.md section 31's rounds agreed within
0.3% on the large graphs).

    python -m hector.bench.compare tp.jsonl --baseline old
"""

import argparse
import collections
import json
import sys


def best_times(lines):
    """{(case, system): {tag: (best ms, rounds)}} from JSON lines; blank
    lines are skipped, and a line that is not a throughput record raises
    ValueError naming its number."""
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
            key = (r["case"], r.get("system", ""))
            times[key][r["tag"]].append(float(r["ms"]))
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"line {number}: not a throughput record "
                             f"({e})") from None
    return {key: {tag: (min(ms), len(ms)) for tag, ms in tags.items()}
            for key, tags in times.items()}


def comparison_rows(best, baseline):
    """Rows (case, system, baseline ms, [(tag, ms, speedup)]) for the cases
    the baseline tag has, sorted by case and system; the other tags in
    name order."""
    rows = []
    for (case, system), tags in sorted(best.items()):
        if baseline not in tags:
            continue
        base = tags[baseline][0]
        others = [(tag, ms, base / ms if ms > 0 else float("inf"))
                  for tag, (ms, _) in sorted(tags.items()) if tag != baseline]
        rows.append((case, system, base, others))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m hector.bench.compare")
    p.add_argument("files", nargs="+",
                   help="JSON lines of hector.bench.throughput runs")
    p.add_argument("--baseline", required=True,
                   help="the tag the others are compared with")
    args = p.parse_args(argv)
    lines = []
    for path in args.files:
        with open(path) as f:
            lines.extend(f.readlines())
    try:
        best = best_times(lines)
    except ValueError as e:
        p.error(str(e))
    rows = comparison_rows(best, args.baseline)
    if not rows:
        p.error(f"no case has the baseline tag {args.baseline!r}")
    for case, system, base, others in rows:
        text = "  ".join(f"{tag} {ms:9.3f} ({speedup:.3f}x)"
                         for tag, ms, speedup in others)
        print(f"{case:28s} {system:10s} {args.baseline} {base:9.3f}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

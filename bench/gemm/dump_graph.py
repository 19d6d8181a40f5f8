"""Writes a synthetic graph of hector.datasets for bench_summed_rows: int64
N, E, R, then src[E], dst[E], etype[E] (little-endian int64).

Usage: python3 bench/gemm/dump_graph.py DATASET OUT_FILE [--device cuda]
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "runtime" / "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from hector import datasets  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", choices=datasets.names())
    ap.add_argument("out")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available()
                    else "cpu")
    args = ap.parse_args()
    g = datasets.synthetic(args.dataset, device=args.device)
    head = np.array([g.num_nodes, g.num_edges, g.num_etypes], dtype="<i8")
    with open(args.out, "wb") as f:
        f.write(head.tobytes())
        for t in (g.edge_index[0], g.edge_index[1], g.edge_type):
            f.write(t.to("cpu", torch.int64).numpy().astype("<i8").tobytes())
    print(f"{args.dataset}: N={g.num_nodes} E={g.num_edges} "
          f"R={g.num_etypes} -> {args.out}")


if __name__ == "__main__":
    main()

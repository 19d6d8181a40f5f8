"""Session 46, call h: does a gather of 128-byte rows move rows faster
than one of 256-byte rows? (the proposal after section 110: x's rows
gathered as scaled fp16). Each destination's in-edges' source rows
gathered and summed (torch.nn.functional.embedding_bag, mode "sum", one
bag a destination, edges in destination order), fp32 [N, 64] against
fp16 [N, 64], on the synthetic am, mag and wikikg2 graphs, and the fp32
-> fp16 conversion pass; CUDA events, the median of 20 after 3 warm-up
calls. A proxy for the summed GEMM's gathers (it sums by destination,
not by (destination, relation), and writes one row a destination).
Usage: s46h_gather.py [DEVICE [SCALE]]
"""
import json
import statistics
import sys

import torch

from hector import datasets as hds


def median_ms(fn, dev, n=20, warm=3):
    for _ in range(warm):
        fn()
    times = []
    for _ in range(n):
        if dev.type == "cuda":
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
        else:
            import time
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    dev = torch.device(sys.argv[1] if len(sys.argv) > 1 else "cuda")
    scale = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    for ds in ("am", "mag", "wikikg2"):
        g = hds.synthetic(ds, device=dev, scale=scale)
        n = g.num_nodes
        src, dst = g.edge_index
        order = torch.argsort(dst)
        src = src[order].contiguous()
        counts = torch.bincount(dst, minlength=n)
        offsets = torch.cumsum(counts, 0) - counts
        x = torch.randn(n, 64, device=dev)
        xh = x.half()
        bag = torch.nn.functional.embedding_bag
        row = {"dataset": ds, "nodes": n, "edges": src.numel(),
               "gather_fp32_ms": median_ms(
                   lambda: bag(src, x, offsets, mode="sum"), dev),
               "gather_fp16_ms": median_ms(
                   lambda: bag(src, xh, offsets, mode="sum"), dev),
               "convert_ms": median_ms(lambda: x.half(), dev)}
        row = {k: round(v, 4) if isinstance(v, float) else v
               for k, v in row.items()}
        row["fp32/fp16"] = round(row["gather_fp32_ms"] /
                                 row["gather_fp16_ms"], 3)
        print(json.dumps(row), flush=True)
        del g, x, xh, src, dst, order, offsets
        torch.cuda.empty_cache() if dev.type == "cuda" else None


if __name__ == "__main__":
    main()

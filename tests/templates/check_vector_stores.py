#!/usr/bin/env python3
"""Fails when a CUDA source's kernels store to global memory other than as
16-byte vectors.

usage: check_vector_stores.py NVCC SOURCE INCLUDE_DIR [KERNEL_SUBSTRING]

Builds SOURCE's PTX for sm_90 with NVCC and looks at every `st.global`
in every kernel (`.entry`) whose name holds KERNEL_SUBSTRING (all kernels
when it is left out). Each must be a `.v4` of 32-bit words.

Why: the dense-rows GEMM kernel's epilogue writes each lane's four
adjacent columns as one float4. nvcc compiled the plain float4 assignment
into four 4-byte stores, and 69% of the L2 sectors they touched were
excessive (docs/perf-notes.md section 93). Nothing about the results
changes when that happens again, so only the PTX can show it.
"""
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ENTRY = re.compile(r"^\s*(?:\.(?:visible|weak)\s+)?\.entry\s+(\S+?)\s*\(", re.M)
STORE = re.compile(r"^\s*(?:@%p\d+\s+)?(st\.global[\w.]*)\s", re.M)
VECTOR_OF_WORDS = re.compile(r"\.v4\.(?:f32|b32|u32|s32)$")


def kernels(ptx):
    """(name, body) of each kernel, the body running to the next entry."""
    starts = list(ENTRY.finditer(ptx))
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(ptx)
        yield m.group(1), ptx[m.end():end]


def bad_stores(ptx, wanted):
    """{kernel: [store opcodes that are not 16-byte vectors]}, and how many
    kernels were looked at and how many vector stores they have."""
    bad, looked, vectors = {}, 0, 0
    for name, body in kernels(ptx):
        if wanted and wanted not in name:
            continue
        looked += 1
        for op in STORE.findall(body):
            if VECTOR_OF_WORDS.search(op):
                vectors += 1
            else:
                bad.setdefault(name, []).append(op)
    return bad, looked, vectors


def main(argv):
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    nvcc, source, include = argv[1:4]
    wanted = argv[4] if len(argv) == 5 else ""
    with tempfile.TemporaryDirectory() as tmp:
        ptx_path = Path(tmp) / "out.ptx"
        subprocess.run([nvcc, "-arch=sm_90", "-std=c++17", "-ptx",
                        "-I", include, source, "-o", str(ptx_path)],
                       check=True)
        ptx = ptx_path.read_text()
    bad, looked, vectors = bad_stores(ptx, wanted)
    if looked == 0:
        print(f"no kernel of {source} matches {wanted!r}", file=sys.stderr)
        return 1
    for name, ops in sorted(bad.items()):
        print(f"{name}: {len(ops)} global stores not 16-byte vectors "
              f"({', '.join(sorted(set(ops)))})", file=sys.stderr)
    if bad:
        return 1
    # A kernel with no store at all would pass the loop above vacuously.
    if vectors == 0:
        print(f"{source}: no global store in {looked} kernels",
              file=sys.stderr)
        return 1
    print(f"{source}: {looked} kernels, {vectors} global stores, "
          "all 16-byte vectors")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

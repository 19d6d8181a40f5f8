#!/usr/bin/env bash
# ptx-snapshot.sh BUILD_DIR OUT_DIR: the PTX of every CUDA source that
# BUILD_DIR compiles, made with its own nvcc command lines but for sm_90
# alone and without line info (which moves with every edit): one
# OUT_DIR/<source path>.ptx each.
#
# Two snapshots, before and after a change, compared with `diff -r`, say
# whether a refactoring of the CUDA templates or of the emitted kernels
# changed any kernel. ptxas turns the same PTX into the same SASS, so a
# change that leaves every file's PTX as it was keeps the kernels' speed
# and results without a GPU run (docs/conventions.md). PTX is device code
# only: a change to host code (a launcher's grid, a switch) does not show
# here and still needs its run.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR OUT_DIR" >&2
  exit 2
fi
build="$(cd "$1" && pwd)"
out="$(mkdir -p "$2" && cd "$2" && pwd)"
root="$(cd "$(dirname "$0")/.." && pwd)"
jobs="$(nproc)"

# One line per CUDA object: "SOURCE<TAB>COMMAND" with the command turned
# from `-x cu -c SOURCE -o OBJECT` into `-x cu -ptx SOURCE -o PTX`.
ninja -C "$build" -t commands | grep -E ' -x cu -c ' | while IFS= read -r cmd; do
  src="$(sed -E 's/.* -x cu -c ([^ ]+) -o .*/\1/' <<<"$cmd")"
  rel="$(realpath --relative-to="$root" "$src")"
  mkdir -p "$out/$(dirname "$rel")"
  ptx="$out/$rel.ptx"
  sed -E "s# -x cu -c [^ ]+ -o [^ ]+# -x cu -ptx $src -o $ptx#;
          s# -MD -MT [^ ]+ -MF [^ ]+##; s# --generate-code=[^ ]+##g;
          s# -g # #; s# -lineinfo # #; s#(/nvcc) #\1 -arch=sm_90 #" <<<"$cmd"
done | sort -u | xargs -P "$jobs" -I{} bash -c '{}'

# nvcc names a file's anonymous namespace with a number of its own run
# (the mangled "<length>_GLOBAL__N__<hash>_<file>_<hash>_<run>"): the same
# name for every run, so that only changes of the code show in a diff.
python3 - "$out" <<'PY'
import pathlib, re, sys

def canonical(text):
    parts, pos = [], 0
    for m in re.finditer(r"(\d+)_GLOBAL__N__", text):
        if m.start() < pos:
            continue
        end = m.start(1) + len(m.group(1)) + int(m.group(1))
        parts += [text[pos:m.start()], "16_GLOBAL__N__anon"]
        pos = end
    return "".join(parts) + text[pos:]

for f in pathlib.Path(sys.argv[1]).rglob("*.ptx"):
    f.write_text(canonical(f.read_text()))
PY
find "$out" -name '*.ptx' | wc -l | sed 's/$/ PTX files/'

#!/usr/bin/env bash
# Installs everything Hector needs on a fresh Debian 12 machine, skipping
# what is already there (safe to run any number of times):
#  - Debian packages: toolchain, ANTLR4, libtorch + python3-torch, pybind11,
#    GoogleTest, CLI11, nlohmann-json, fmt, clang + libFuzzer runtime,
#    FileCheck;
#  - .venv: a virtual environment that sees the system torch, with
#    torch_geometric from PyPI (the baseline the PyG-compatible models are
#    tested against).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build git pkg-config
  antlr4 libantlr4-runtime-dev
  libtorch-dev python3-torch python3-dev python3-venv python3-pip
  pybind11-dev python3-pytest python3-numpy python3-matplotlib
  libgtest-dev libgmock-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev
  clang libclang-rt-14-dev llvm-14-tools
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: Debian packages already installed"
fi

# PyG must not replace the Debian torch: --system-site-packages makes the
# venv see it, and --no-deps keeps pip from pulling a torch wheel.
PYG_VERSION="${HECTOR_PYG_VERSION:-2.8.1}"
if [ ! -x .venv/bin/python ]; then
  /usr/bin/python3 -m venv --system-site-packages .venv
fi
if ! .venv/bin/python -c "import torch_geometric, sys; sys.exit(torch_geometric.__version__ != '$PYG_VERSION')" 2>/dev/null; then
  echo "setup: installing torch_geometric==$PYG_VERSION into .venv"
  .venv/bin/pip install -q --disable-pip-version-check "torch_geometric==$PYG_VERSION"
else
  echo "setup: torch_geometric $PYG_VERSION already in .venv"
fi

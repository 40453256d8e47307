#!/usr/bin/env bash
# Installs the Debian 12 packages tlc needs to build and test, when they are missing. Runs as
# root (or through sudo), never asks anything (CI=true, no stdin), and does nothing at all when
# everything is there. The test and sample scripts call it; so can you.
#
#   scripts/install-deps.sh            # build + test dependencies
#   scripts/install-deps.sh --minimal  # only what building tlc needs
set -euo pipefail

build_pkgs=(cmake ninja-build g++ python3 antlr4 libantlr4-runtime-dev libfmt-dev libcli11-dev
            nlohmann-json3-dev)
# Tests: doctest, lit + FileCheck (llvm-14-tools), the compilers and libraries that the run and
# compile layers use (hipcc for HIP, OpenBLAS as the CPU reference, clang 15 for the fuzzers),
# what the --emit=python example builds and runs with (pybind11, Python's headers, NumPy), and
# the headless browser that renders the kernel report (report-browser: chromium).
test_pkgs=(doctest-dev llvm-14-tools hipcc libopenblas-dev clang-15 pybind11-dev python3-dev python3-numpy chromium)

pkgs=("${build_pkgs[@]}")
[ "${1:-}" = "--minimal" ] || pkgs+=("${test_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
  echo "install-deps.sh: missing packages (${missing[*]}) and no apt-get: install them by hand" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then sudo=(sudo -n); else
    echo "install-deps.sh: missing packages (${missing[*]}); run as root or install sudo" >&2
    exit 1
  fi
fi
echo "install-deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q </dev/null >/dev/null
"${sudo[@]}" apt-get install -y -q "${missing[@]}" </dev/null >/dev/null
echo "install-deps.sh: done" >&2

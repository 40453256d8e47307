#!/usr/bin/env bash
# CTest python-example: builds examples/python (tlc --emit=python on samples/gemm.tl for the cpu,
# a pybind11 module) with the tlc under test, then runs its test script with the interpreter the
# module was built for.
#
#   tests/python/run_example.sh TLC PYTHON WORKDIR [CMAKE_GENERATOR]
#
# Exit 77 (CTest: skipped) when NumPy or pybind11's CMake package is missing (scripts/install-deps.sh
# installs python3-numpy and pybind11-dev).
set -euo pipefail
tlc=$1 python=$2 work=$3 generator=${4:-Ninja}
root=$(cd "$(dirname "$0")/../.." && pwd)

if ! "$python" -c 'import numpy' 2>/dev/null; then
  echo "skipped: $python cannot import numpy (Debian: python3-numpy)"
  exit 77
fi
mkdir -p "$work"
if ! cmake -S "$root/examples/python" -B "$work" -G "$generator" -DTLC="$tlc" -DPython_EXECUTABLE="$python" \
     >"$work/configure.log" 2>&1; then
  if grep -q 'pybind11' "$work/configure.log"; then
    echo "skipped: no pybind11 CMake package (Debian: pybind11-dev)"
    grep -A3 'pybind11' "$work/configure.log" | head -8
    exit 77
  fi
  cat "$work/configure.log"
  exit 1
fi
cmake --build "$work" -j2
exec "$python" "$root/examples/python/test_gemm.py" "$work"

#!/usr/bin/env bash
# The differential tester (issue 13, tests/difftest/README.md): random kernels compiled by tlc
# for each target, run (cpu with OpenMP, GPU targets in the SIMT simulator) and compared with
# the reference evaluator tlc-eval. Uses an existing build (build/ or $TLC_BUILD_DIR: tlc, and
# tests/difftest/tlc-eval when built); findings go to <build>/difftest/findings/.
#
#   scripts/difftest.sh [--count N] [--seed S] [--targets cpu,sm80,sm90,gfx90a] [--jobs J] [--keep]
#
# Other options are difftest.py's (--batch, --ref eval|cpu, --program FILE.tl, --coverage, -v).
# The last line is `difftest: N passed, N failed`; the exit status is 1 when anything failed.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${TLC_BUILD_DIR:-$here/build}
if [ ! -x "$build_dir/tlc" ]; then
  echo "difftest.sh: no tlc in $build_dir: run scripts/test.sh (or set TLC_BUILD_DIR) first" >&2
  exit 2
fi
exec python3 "$here/tests/difftest/difftest.py" --build-dir "$build_dir" "$@"

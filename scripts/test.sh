#!/usr/bin/env bash
# Builds tlc and runs the whole test suite: installs what is missing (Debian 12, as root),
# configures a Ninja build (RelWithDebInfo) in build/ (or $TLC_BUILD_DIR), builds with 2 jobs
# and runs ctest. This is what CI runs (.ci/run).
#
#   scripts/test.sh            # incremental: reuses the build directory
#   scripts/test.sh --clean    # deletes the build directory first
#   scripts/test.sh -R lit     # extra arguments go to ctest (here: only the lit suites)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${TLC_BUILD_DIR:-$here/build}
jobs=${TLC_JOBS:-2}
if [ "${1:-}" = "--clean" ]; then
  rm -rf "$build_dir"
  shift
fi

"$here/scripts/install-deps.sh"

# A build directory configured by another generator (or moved) cannot be reused.
if [ -f "$build_dir/CMakeCache.txt" ] && ! grep -q "CMAKE_GENERATOR:INTERNAL=Ninja" "$build_dir/CMakeCache.txt"; then
  echo "test.sh: $build_dir was not configured with Ninja; starting it afresh" >&2
  rm -rf "$build_dir"
fi
# tlc_core as a unity build (CMakeLists.txt, TLC_UNITY_BUILD): half the compile time of a clean
# build; TLC_UNITY_BUILD=OFF in the environment keeps one object per source (quicker rebuilds
# after editing one file).
cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTLC_BUILD_TESTS=ON \
  -DTLC_UNITY_BUILD="${TLC_UNITY_BUILD:-ON}"
cmake --build "$build_dir" -j "$jobs"
cd "$build_dir"
ctest --output-on-failure -j "$jobs" "$@"

#!/usr/bin/env bash
# Builds tlc and compiles samples/gemm.tl for Hopper (sm90): installs what is missing (Debian
# 12, as root), builds the compiler (Ninja, RelWithDebInfo, 2 jobs) in build/ (or
# $TLC_BUILD_DIR), runs
#
#     tlc samples/gemm.tl --target=sm90 -o out/gemm.cu
#
# and says what tlc produced (the kernel source and its launcher header, out/gemm.h).
#   scripts/run-sample.sh [SAMPLE.tl] [TARGET]     e.g. scripts/run-sample.sh samples/softmax.tl cpu
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${TLC_BUILD_DIR:-$here/build}
sample=${1:-samples/gemm.tl}
target=${2:-sm90}

"$here/scripts/install-deps.sh" --minimal
if [ -f "$build_dir/CMakeCache.txt" ] && ! grep -q "CMAKE_GENERATOR:INTERNAL=Ninja" "$build_dir/CMakeCache.txt"; then
  rm -rf "$build_dir"
fi
# Only the compiler is built here. A new build directory is configured without the test suite
# (fewer packages); one scripts/test.sh configured keeps it, so that its test targets are not
# silently dropped from later builds there.
tests_option=()
[ -f "$build_dir/CMakeCache.txt" ] || tests_option=(-DTLC_BUILD_TESTS=OFF)
# The same configuration as scripts/test.sh (a unity build of tlc_core, RelWithDebInfo), so that
# the test command after this one reuses every object built here instead of rebuilding tlc_core.
cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${tests_option[@]}" \
  -DTLC_UNITY_BUILD="${TLC_UNITY_BUILD:-ON}" >/dev/null
cmake --build "$build_dir" --target tlc -j 2

cd "$here"
name=$(basename "$sample" .tl)
case "$target" in
  gfx*) ext=hip ;;
  cpu) ext=cpp ;;
  *) ext=cu ;;
esac
out="out/$name.$ext"
mkdir -p out
rm -f "$out" "out/$name.h"
echo "\$ $build_dir/tlc $sample --target=$target -o $out"
status=0
"$build_dir/tlc" "$sample" --target="$target" -o "$out" || status=$?
produced=()
for f in "$out" "out/$name.h"; do
  [ -f "$f" ] && produced+=("$f")
done
if [ ${#produced[@]} -eq 0 ]; then
  echo "tlc wrote nothing (exit code $status)"
else
  echo "tlc wrote (exit code $status):"
  for f in "${produced[@]}"; do
    printf '  %-24s %6d lines  %s\n' "$f" "$(wc -l < "$f")" "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")"
  done
fi
exit "$status"

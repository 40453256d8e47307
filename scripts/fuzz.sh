#!/usr/bin/env bash
# Builds the libFuzzer targets with clang++-15 (AddressSanitizer + UndefinedBehaviorSanitizer)
# in a separate build directory and runs one of them on a seed corpus made from samples/ and
# tests/lit/. Not part of the normal test suite. docs/testing.md describes it.
#
#   scripts/fuzz.sh [--target fuzz_frontend|fuzz_compile] [--time SECONDS] [--jobs N]
#                   [--build-dir DIR] [--build-only] [-- LIBFUZZER_ARGS...]
#
# Findings (crash-*, leak-*, timeout-*) are written to <build-dir>/findings/<target>/. Reproduce
# one with:  <build-dir>/tests/fuzz/<target> <file>
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target=fuzz_frontend
seconds=300
jobs=1
build_dir="$here/build-fuzz"
build_only=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target=$2; shift 2 ;;
    --time) seconds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

# Tools: the project's dependencies and clang 15 (clang 14 cannot compile the ANTLR headers).
"$here/scripts/install-deps.sh"
if ! command -v clang++-15 >/dev/null; then
  echo "fuzz.sh: installing clang-15" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends clang-15 libclang-rt-15-dev >/dev/null 2>&1 ||
    apt-get install -y -q --no-install-recommends clang-15 >/dev/null
fi

cmake -S "$here" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-15 -DCMAKE_CXX_COMPILER=clang++-15 -DTLC_FUZZ=ON -DTLC_BUILD_TESTS=OFF >/dev/null
cmake --build "$build_dir" --target "$target" -j 2
[ "$build_only" = 1 ] && exit 0

# Seed corpus: every .tl the project has, each behind a byte that picks the target (the
# fuzzers read the first byte as a target index). Existing corpus entries are kept.
corpus="$build_dir/corpus/$target"
findings="$build_dir/findings/$target"
mkdir -p "$corpus" "$findings"
i=0
while IFS= read -r -d '' f; do
  for t in 0 3 6; do
    { printf "\\x$(printf %02x $t)"; cat "$f"; } > "$corpus/seed-$i-$t.tl"
  done
  i=$((i + 1))
done < <(find "$here/samples" "$here/tests/lit" "$here/tests/fuzz/crashes-fixed" -name '*.tl' -print0 2>/dev/null)
echo "fuzz.sh: $target for ${seconds}s on $(ls "$corpus" | wc -l) corpus files; findings go to $findings"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
parallel=()
[ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
cd "$findings"
"$build_dir/tests/fuzz/$target" "$corpus" \
  -dict="$here/tests/fuzz/tl.dict" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
  -rss_limit_mb=4096 -print_final_stats=1 "${parallel[@]}" "${extra[@]}"

#!/usr/bin/env bash
# Compiles every .tl of the repository (samples/, examples/, tests/) for every target and writes
# what tlc produced (files, stdout, stderr, exit code) under OUTDIR, one folder per input and
# target. Two snapshots compared with `diff -r` show whether a change altered any output: the
# check behind "behaviour-preserving" refactors (docs/testing.md).
#
#   scripts/output-snapshot.sh OUTDIR [TLC]      TLC defaults to build/tlc
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${1:?usage: output-snapshot.sh OUTDIR [TLC]}
tlc=$(realpath "${2:-$here/build/tlc}")
jobs=${TLC_JOBS:-2}
mkdir -p "$out"
out=$(realpath "$out")
cd "$here"

one() {  # FILE TARGET
  local file=$1 target=$2 dir ext
  dir="$out/${file//\//__}/$target"
  mkdir -p "$dir"
  case "$target" in gfx*) ext=hip ;; cpu*) ext=cpp ;; *) ext=cu ;; esac
  local rc=0
  "$tlc" "$file" --target="$target" -o "$dir/k.$ext" --emit-manifest >"$dir/stdout" 2>"$dir/stderr" || rc=$?
  echo "$rc" >"$dir/rc"
  # The decisions, and the lowered IR of the first kernel (what the passes produced).
  rc=0
  "$tlc" "$file" --target="$target" --explain >"$dir/explain" 2>/dev/null || rc=$?
  echo "$rc" >>"$dir/rc"
  rc=0
  "$tlc" "$file" --target="$target" --emit=python -o "$dir/py.$ext" >/dev/null 2>&1 || rc=$?
  "$tlc" "$file" --target="$target" --emit=layouts >"$dir/layouts" 2>&1 || rc=$?
  echo "$rc" >>"$dir/rc"
  if grep -q '\<auto\>' "$file"; then
    rc=0
    "$tlc" "$file" --target="$target" --emit-variants=3 -o "$dir/variants.$ext" >"$dir/variants.stdout" 2>"$dir/variants.stderr" || rc=$?
    echo "$rc" >>"$dir/rc"
    rc=0
    "$tlc" recommend "$file" --target="$target" --top 4 >"$dir/recommend.json" 2>"$dir/recommend.stderr" || rc=$?
    echo "$rc" >>"$dir/rc"
  fi
}
export -f one
export out tlc

targets=$("$tlc" --list-targets | awk 'NR > 0 && $1 ~ /^(sm|gfx|cpu)/ {print $1}')
files=$(git ls-files 'samples/*.tl' 'examples/*.tl' 'tests/*.tl')
for f in $files; do
  for t in $targets; do echo "$f $t"; done
done | xargs -P "$jobs" -n 2 bash -c 'one "$0" "$1"'
echo "output-snapshot: $(echo "$files" | wc -w) inputs x $(echo "$targets" | wc -w) targets in $out"

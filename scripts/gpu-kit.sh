#!/usr/bin/env bash
# The GPU validation kit (docs/testing.md, "GPU kit"): prepare it here, run it on a GPU machine.
#
#   scripts/gpu-kit.sh prepare [--out DIR] [--build-dir build]     on the build machine (no GPU):
#       tlc's output for every run-layer, corpus and benchmark kernel (sm80, sm89, sm90), the run
#       layer's drivers and references, and the GPU side, in DIR (default build/gpu-kit)
#   scripts/gpu-kit.sh build --arch sm_80,sm_90a [--kit DIR]       build all of it with nvcc (CI)
#   scripts/gpu-kit.sh run [--quick] [--kit DIR]                   on the GPU machine: build for the
#       device, run every kernel against references, the Python example with PyTorch CUDA
#       tensors, compute-sanitizer, benchmarks; writes report.md and report.json into the kit
#
# The kit holds a copy of this script: on the GPU machine, `./gpu-kit.sh run` from the kit folder.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cmd=${1:-}
[ $# -gt 0 ] && shift
# Inside a kit this script sits beside kit.json; in the tree, the kit is build/gpu-kit.
if [ -f "$here/kit.json" ]; then
  kit=$here
  root=
else
  root=$(cd "$here/.." && pwd)
  kit=$root/build/gpu-kit
fi
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --kit) kit=$(cd "$2" && pwd); shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done

case "$cmd" in
  prepare)
    if [ -z "$root" ]; then echo "gpu-kit.sh: prepare runs in the source tree, not in a kit" >&2; exit 2; fi
    exec python3 "$root/bench/gpu/kit/prepare.py" ${args[@]+"${args[@]}"} ;;
  build|run)
    if [ ! -f "$kit/kit.json" ]; then echo "gpu-kit.sh: no kit in $kit (run 'gpu-kit.sh prepare' first)" >&2; exit 2; fi
    cd "$kit"
    exec python3 "$kit/kit.py" "$cmd" ${args[@]+"${args[@]}"} ;;
  *)
    sed -n '2,13p' "$0"; exit 2 ;;
esac

#!/usr/bin/env bash
# CPU benchmark: builds tlc's cpu output of bench/cpu/kernels/*.tl and samples (softmax,
# rmsnorm, reduce_sum, flash_attention), links it with a driver against OpenBLAS and oneDNN,
# and prints one Markdown table (tlc and its baseline measured side by side in one run) for
# bench/RESULTS.md.
#
#   bench/cpu/run.sh [--target cpu|cpu-avx2|cpu-avx512] [--tlc PATH] [--only sgemm|bgemm|igemm|attention|rows|beginner]
#                    [-D NAME=VALUE ...]   (tile sizes of the three gemm kernels: block_M, block_N, block_K)
#                    [--build-only]        (build the driver, measure nothing: on a machine that is not quiet)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
target=cpu
tlc="$root/build/tlc"
only=all
build_only=false
gemm_defines=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target=$2; shift 2 ;;
    --tlc) tlc=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -D) gemm_defines+=(-D "$2"); shift 2 ;;
    --build-only) build_only=true; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
missing=()
[ -f /usr/include/x86_64-linux-gnu/cblas.h ] || [ -f /usr/include/cblas.h ] || missing+=(libopenblas-dev)
[ -f /usr/include/oneapi/dnnl/dnnl.hpp ] || [ -f /usr/include/dnnl.hpp ] || missing+=(libdnnl-dev)
if [ ${#missing[@]} -gt 0 ]; then
  echo "run.sh: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
[ -x "$tlc" ] || { echo "run.sh: no tlc at $tlc (build the project first)" >&2; exit 1; }

out="$root/build/bench-cpu/$target"
mkdir -p "$out"
gen() {  # gen NAME FILE [-D ...]
  local name=$1 file=$2; shift 2
  "$tlc" "$file" --target="$target" -o "$out/$name.cpp" --header "$out/$name.h" "$@"
}
gen sgemm "$here/kernels/sgemm.tl" "${gemm_defines[@]}"
gen bgemm "$here/kernels/bgemm.tl" "${gemm_defines[@]}"
gen igemm "$here/kernels/igemm.tl" "${gemm_defines[@]}"
gen layernorm "$here/kernels/layernorm.tl"
gen softmax "$root/samples/softmax.tl" -D N=1024
gen rmsnorm "$root/samples/rmsnorm.tl" -D dtype=f32 -D N=4096
gen reduce_sum "$root/samples/reduce_sum.tl"
gen flash_attention "$root/samples/flash_attention.tl"
# The beginner level beside the developer level with `auto` tiles (--only beginner).
gen beginner "$here/kernels/beginner.tl"
gen gemm_auto "$root/samples/gemm_auto.tl"
gen softmax_auto "$root/samples/softmax_auto.tl"
gen layernorm_auto "$here/kernels/layernorm_auto.tl"

flags=(-O3 -march=native -fopenmp -std=c++17)
objs=()
for k in sgemm bgemm igemm layernorm softmax rmsnorm reduce_sum flash_attention beginner gemm_auto softmax_auto layernorm_auto; do
  g++ "${flags[@]}" -c "$out/$k.cpp" -o "$out/$k.o"
  objs+=("$out/$k.o")
done
g++ "${flags[@]}" -I"$out" "$here/bench.cpp" "${objs[@]}" -o "$out/bench" -lopenblas -ldnnl
if $build_only; then echo "built $out/bench"; exit 0; fi
echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(g++ --version | head -1);" \
     "OMP_NUM_THREADS=${OMP_NUM_THREADS:-all}; target $target; gemm tiles: ${gemm_defines[*]:-as in the .tl files}"
"$out/bench" "$only"

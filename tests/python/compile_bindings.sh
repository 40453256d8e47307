#!/usr/bin/env bash
# CTest python-bindings-compile: the bindings of --emit=python for what the cpu example does not
# build -- CUDA and HIP targets, a group with its workspace, a dispatcher of variants, sizes from
# strides and size arguments -- compile warning-free (-Wall -Wextra -Werror, syntax only, and one
# at -O2: nothing runs). A toolkit that is missing is reported and skipped.
#
#   tests/python/compile_bindings.sh TLC PYTHON WORKDIR
set -euo pipefail
tlc=$1 python=$2 work=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
pyinc=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
pybind=$("$python" -c 'import pybind11; print(pybind11.get_include())' 2>/dev/null || echo /usr/include)
if [ ! -e "$pybind/pybind11/pybind11.h" ] || [ ! -e "$pyinc/Python.h" ]; then
  echo "skipped: no pybind11 or Python headers (Debian: pybind11-dev, python3-dev)"
  exit 77
fi
cuda=${CUDA_HOME:-/usr/local/cuda}
flags=(-std=c++17 -fsyntax-only -Wall -Wextra -Werror -I"$pyinc" -I"$pybind")
rm -rf "$work" && mkdir -p "$work"
checked=0

# check NAME TARGET TL [tlc flags...]: generate into WORK/NAME and compile the binding.
check() {
  local name=$1 target=$2 tl=$3 ext
  shift 3
  case $target in
    sm*) ext=cu; [ -e "$cuda/include/cuda_runtime.h" ] || { echo "skip $name: no CUDA toolkit"; return; } ;;
    gfx*) ext=hip; command -v hipcc >/dev/null || { echo "skip $name: no hipcc"; return; } ;;
    *) ext=cpp ;;
  esac
  mkdir -p "$work/$name"
  "$tlc" "$tl" --target="$target" --emit=python -o "$work/$name/$name.$ext" "$@"
  local binding="$work/$name/${name}_python.cpp"
  case $target in
    sm*) g++ "${flags[@]}" -I"$cuda/include" "$binding" ;;
    # --offload-arch: hipcc would otherwise ask the (absent) GPU for one; the link flags it adds
    # are unused in a syntax-only run.
    gfx*) hipcc --offload-arch=gfx90a -Wno-unused-command-line-argument -x c++ "${flags[@]}" "$binding" ;;
    *) g++ "${flags[@]}" -fopenmp "$binding" ;;
  esac
  echo "ok: $name ($target)"
  checked=$((checked + 1))
}

check gemm_sm90 sm90 "$root/samples/gemm.tl"
check gemm_gfx942 gfx942 "$root/samples/gemm.tl"
check decoding_sm80 sm80 "$root/tests/corpus/flash_decoding.tl"
check decoding_gfx90a gfx90a "$root/tests/corpus/flash_decoding.tl"
check decoding_cpu cpu "$root/tests/corpus/flash_decoding.tl"
check softmax_variants cpu "$root/samples/softmax_auto.tl" --emit-variants=2
check strided_cpu cpu "$root/tests/python/Inputs/strided.tl"
check strided_sm90 sm90 "$root/tests/python/Inputs/strided.tl" --namespace=ops::v1
# Some warnings come only from the optimiser (g++ 12's -Wfree-nonheap-object did): one binding
# compiled for real at -O2.
g++ "${flags[@]/-fsyntax-only/-c}" -O2 -fPIC -fopenmp "$work/strided_cpu/strided_cpu_python.cpp" -o "$work/strided_cpu.o"
echo "ok: strided_cpu at -O2"
echo "$checked bindings compile"

// Included before each run-layer driver in the GPU kit (kit.py: nvcc -include kit_types.h). The
// drivers name element types as tl::half, tl::bfloat16, tl::fp8_e4m3 and tl::fp8_e5m2, which
// the cpu runtime and the SIMT simulator's stand-in CUDA headers define; with the real CUDA
// headers they are CUDA's own types.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace tl {
using half = ::__half;
using bfloat16 = ::__nv_bfloat16;
using fp8_e4m3 = ::__nv_fp8_e4m3;
using fp8_e5m2 = ::__nv_fp8_e5m2;
} // namespace tl

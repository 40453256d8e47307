// tl_hip.h -- device helpers for tlc's HIP output. Sections: see tl_common.h. The matrix-core
// helpers are tl_hip_mfma.h; what HIP shares with CUDA is tl_gpu.h.
#pragma once

#include <hip/hip_runtime.h>

#include "tl_common.h"
#include "tl_gpu.h"

// tlc:section math
namespace tl {
__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + __expf(-x)); }
__device__ __forceinline__ double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
// silu(x) = x sigmoid(x) (PyTorch's SiLU); gelu(x) = x Phi(x) with the exact erf form (PyTorch's
// GELU without approximate = "tanh").
__device__ __forceinline__ float silu(float x) { return x * sigmoid(x); }
__device__ __forceinline__ double silu(double x) { return x * sigmoid(x); }
__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }
__device__ __forceinline__ double gelu(double x) { return 0.5 * x * (1.0 + erf(x * 0.70710678118654752)); }
// relu(x) = max(x, 0); NaN stays NaN, as in PyTorch.
__device__ __forceinline__ float relu(float x) { return x > 0.0f || x != x ? x : 0.0f; }
__device__ __forceinline__ double relu(double x) { return x > 0.0 || x != x ? x : 0.0; }
} // namespace tl
// tlc:end

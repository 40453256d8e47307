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
} // namespace tl
// tlc:end

// tl_cuda.h -- device helpers for tlc's CUDA output that are not of one concern below, and what
// those headers share. Sections: see tl_common.h. The rest, by concern: tl_cuda_mma.h (ldmatrix,
// mma.sync: sm_80 tensor cores), tl_cuda_async.h (cp.async), tl_cuda_mbarrier.h, tl_cuda_tma.h
// (TMA copies; device), tl_cuda_tma_host.h (tensor maps; host), tl_cuda_wgmma.h (wgmma,
// setmaxnreg: sm_90a); what CUDA shares with HIP is tl_gpu.h.
#pragma once

#include <cuda_runtime.h>

#include "tl_common.h"
#include "tl_gpu.h"

// tlc:section fast_tanh
namespace tl {
// tanh with the hardware approximation (sm_75 and later).
__device__ __forceinline__ float fast_tanh(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
    float y;
    asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#else
    return tanhf(x);
#endif
}
} // namespace tl
// tlc:end

// tlc:section vector_atomic_add
namespace tl {
// atomic_add of 2 or 4 neighbouring f32 elements in one reduction (sm_90, PTX 8.1:
// red.global.add.v2/.v4.f32; p 8- or 16-byte aligned, in global memory). Each element is added
// atomically on its own, as element atomicAdds would; nothing is returned. A parallel loop's
// atomic_add over an accumulator's neighbouring columns (docs/lowering.md).
__device__ __forceinline__ void atomic_add_v2(float* p, float a, float b) {
    asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(p), "f"(a), "f"(b) : "memory");
}
__device__ __forceinline__ void atomic_add_v4(float* p, float a, float b, float c, float d) {
    asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}
} // namespace tl
// tlc:end

// tlc:section smem_u32
#include <cstdint>
namespace tl {
// The 32-bit shared-window address of a generic pointer into shared memory (what the
// `.shared` state space operands of the instructions below take).
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
} // namespace tl
// tlc:end

// Stand-in for <hip/hip_runtime.h> in the SIMT simulator: the CUDA vocabulary of
// ../cuda_runtime.h with HIP's names (to_cpp.py --lanes 64 makes the launches 64-lane).
#pragma once

#define SIMT_HIP
#include "../cuda_runtime.h"

enum hipError_t { hipSuccess = 0, hipErrorInvalidValue = 1 };
using hipStream_t = struct ihipStream_t*;
enum hipFuncAttribute { hipFuncAttributeMaxDynamicSharedMemorySize = 8 };

inline hipError_t hipGetLastError() { return hipSuccess; }
// Kernels run when launched: a stream-ordered memset is a memset.
inline hipError_t hipMemsetAsync(void* p, int value, size_t bytes, hipStream_t = nullptr) {
    std::memset(p, value, bytes);
    return hipSuccess;
}
enum hipDeviceAttribute_t { hipDeviceAttributeMultiprocessorCount = 63 };
inline hipError_t hipGetDevice(int* device) {
    *device = 0;
    return hipSuccess;
}
inline hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attr, int) {
    if (attr != hipDeviceAttributeMultiprocessorCount) return hipErrorInvalidValue;
    *value = simtSmCount();
    return hipSuccess;
}
template <typename F> hipError_t hipFuncSetAttribute(F, hipFuncAttribute, int) { return hipSuccess; }

template <typename T> T __shfl_xor(T value, int laneMask, int width = 64) {
    return ::simt::shuffle(::simt::ShuffleKind::Xor, value, laneMask, width);
}
template <typename T> T __shfl_down(T value, unsigned delta, int width = 64) {
    return ::simt::shuffle(::simt::ShuffleKind::Down, value, int(delta), width);
}
template <typename T> T __shfl_up(T value, unsigned delta, int width = 64) {
    return ::simt::shuffle(::simt::ShuffleKind::Up, value, int(delta), width);
}
template <typename T> T __shfl(T value, int srcLane, int width = 64) {
    return ::simt::shuffle(::simt::ShuffleKind::Idx, value, srcLane, width);
}
inline void __builtin_amdgcn_wave_barrier() { ::simt::syncWarp(); }
inline unsigned long long __ballot(int pred) { return ::simt::ballot(pred != 0); }
inline int __any(int pred) { return ::simt::ballot(pred != 0) != 0; }
inline int __all(int pred) {
    unsigned long long yes = ::simt::ballot(pred != 0);
    return yes == ::simt::liveLanes();
}
// v_dot4_i32_i8 / v_dot4_u32_u8: the four byte products of a and b, summed into c.
inline int __builtin_amdgcn_sdot4(int a, int b, int c, bool) {
    for (int i = 0; i < 4; ++i) c += int(int8_t(a >> (8 * i))) * int(int8_t(b >> (8 * i)));
    return c;
}
inline unsigned __builtin_amdgcn_udot4(unsigned a, unsigned b, unsigned c, bool) {
    for (int i = 0; i < 4; ++i) c += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
    return c;
}

#include "../simt_float.h"
#include "simt_mfma.h"

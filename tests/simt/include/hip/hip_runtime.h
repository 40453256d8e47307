// Stand-in for <hip/hip_runtime.h> in the SIMT simulator: the CUDA vocabulary of
// ../cuda_runtime.h with HIP's names (to_cpp.py --lanes 64 makes the launches 64-lane).
#pragma once

#define SIMT_HIP
#include "../cuda_runtime.h"

enum hipError_t { hipSuccess = 0, hipErrorInvalidValue = 1 };
using hipStream_t = struct ihipStream_t*;
enum hipFuncAttribute { hipFuncAttributeMaxDynamicSharedMemorySize = 8 };

inline hipError_t hipGetLastError() { return hipSuccess; }
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

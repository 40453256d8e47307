// A stand-in for <cuda_runtime.h> used by the SIMT simulator (tests/simt/): just enough of
// the CUDA runtime and device vocabulary for tlc's emitted .cu files to compile as C++ and run
// on the CPU, one fiber per GPU thread. Not a CUDA implementation: a test tool.
#pragma once

#include "simt.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __syncthreads() ::simt::barrier()

#define threadIdx (::simt::threadIndex())
#define blockIdx (::simt::blockIndex())
#define blockDim (::simt::blockDimension())
#define gridDim (::simt::gridDimension())

using dim3 = ::simt::dim3;
struct uint2 { unsigned int x, y; };
struct uint4 { unsigned int x, y, z, w; };

enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1 };
using cudaError = cudaError_t;
using cudaStream_t = struct CUstream_st*;
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

inline cudaError_t cudaGetLastError() { return cudaSuccess; }
template <typename F> cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int) { return cudaSuccess; }

template <typename T> T __shfl_xor_sync(unsigned, T value, int laneMask, int width = 32) {
    return ::simt::shuffleXor(value, laneMask, width);
}

// One OS thread runs every fiber: adds are atomic as they stand.
template <typename T, typename V> T atomicAdd(T* address, V value) {
    T old = *address;
    *address = T(float(old) + float(value));
    return old;
}
inline int atomicAdd(int* address, int value) { int old = *address; *address += value; return old; }
inline float atomicAdd(float* address, float value) { float old = *address; *address += value; return old; }
inline double atomicAdd(double* address, double value) { double old = *address; *address += value; return old; }
inline unsigned int atomicCAS(unsigned int* address, unsigned int compare, unsigned int value) {
    unsigned int old = *address;
    if (old == compare) *address = value;
    return old;
}

inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float exp2f(float x) { return std::exp2(x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }

#ifndef SIMT_HIP
#include "cuda_bf16.h"
#include "cuda_fp16.h"
namespace tl { using bfloat16 = ::__nv_bfloat16; }

// The runtime's mma section, emulated: the emitted code's own section (guarded by this macro)
// holds inline PTX; here the warp's fragments are gathered, multiplied and scattered back.
#define TLC_RUNTIME_TL_CUDA_H_MMA
namespace tl {
namespace simt_mma {
template <typename T> struct Lane {
    float* c;
    const T* a;
    const T* b;
};
// m16n8k16, lane = 4 * group + t (PTX ISA, "Matrix Fragments for mma.m16n8k16").
template <typename T> void m16n8k16(void** lanes, int count) {
    if (count != 32) {
        std::fprintf(stderr, "simt: mma.sync with %d of 32 lanes\n", count);
        std::abort();
    }
    double A[16][16], B[16][8], C[16][8];
    for (int lane = 0; lane < 32; ++lane) {
        const auto& l = *static_cast<Lane<T>*>(lanes[lane]);
        int g = lane / 4, t = lane % 4;
        for (int i = 0; i < 2; ++i) {
            A[g][2 * t + i] = float(l.a[i]);
            A[g + 8][2 * t + i] = float(l.a[2 + i]);
            A[g][2 * t + 8 + i] = float(l.a[4 + i]);
            A[g + 8][2 * t + 8 + i] = float(l.a[6 + i]);
            B[2 * t + i][g] = float(l.b[i]);
            B[2 * t + 8 + i][g] = float(l.b[2 + i]);
            C[g][2 * t + i] = l.c[i];
            C[g + 8][2 * t + i] = l.c[2 + i];
        }
    }
    for (int lane = 0; lane < 32; ++lane) {
        const auto& l = *static_cast<Lane<T>*>(lanes[lane]);
        int g = lane / 4, t = lane % 4;
        for (int i = 0; i < 4; ++i) {
            int row = g + (i / 2) * 8, col = 2 * t + i % 2;
            double sum = C[row][col];
            for (int k = 0; k < 16; ++k) sum += A[row][k] * B[k][col];
            l.c[i] = float(sum);
        }
    }
}
} // namespace simt_mma

inline void mma_m16n8k16_f32_f16(float* c, const __half* a, const __half* b) {
    simt_mma::Lane<__half> lane{c, a, b};
    ::simt::warpCollective(&lane, simt_mma::m16n8k16<__half>);
}
inline void mma_m16n8k16_f32_bf16(float* c, const __nv_bfloat16* a, const __nv_bfloat16* b) {
    simt_mma::Lane<__nv_bfloat16> lane{c, a, b};
    ::simt::warpCollective(&lane, simt_mma::m16n8k16<__nv_bfloat16>);
}
} // namespace tl

// The runtime's async_copy section, emulated: the copy lands at once (each thread waits for its
// own copies before the barrier that publishes them, so landing early changes nothing).
#define TLC_RUNTIME_TL_CUDA_H_ASYNC_COPY
namespace tl {
inline void cp_async_16(void* shared_dst, const void* global_src, bool valid) {
    if (valid) std::memcpy(shared_dst, global_src, 16);
    else std::memset(shared_dst, 0, 16);
}
inline void cp_async_wait_all() {}
} // namespace tl
#endif // SIMT_HIP

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
#include "cuda_fp8.h"
#include <type_traits>
namespace tl { using bfloat16 = ::__nv_bfloat16; }

namespace tl {
namespace simt_warp {
// Warp-wide instructions need the whole warp (PTX: .sync.aligned, undefined if a lane exited).
inline void requireFullWarp(int count, const char* what) {
    if (count != 32) {
        std::fprintf(stderr, "simt: %s with %d of 32 lanes\n", what, count);
        std::abort();
    }
}
inline void requireAligned(const void* p, unsigned bytes, const char* what, int lane) {
    if (reinterpret_cast<std::uintptr_t>(p) % bytes != 0) {
        std::fprintf(stderr, "simt: %s: lane %d passes %p, not %u-byte aligned\n", what, lane, p, bytes);
        std::abort();
    }
}
} // namespace simt_warp
} // namespace tl

// The runtime's ldmatrix section, emulated (PTX ISA, "ldmatrix"): lane 8 * i + r gives the
// address of row r (16 bytes) of matrix i; lane l receives, for each matrix, the 32-bit word
// l % 4 of row l / 4, or with .trans the 16-bit elements [2 * (l % 4)][l / 4] and
// [2 * (l % 4) + 1][l / 4] (low half first).
#define TLC_RUNTIME_TL_CUDA_H_LDMATRIX
namespace tl {
namespace simt_ldmatrix {
struct Lane {
    void* dst;
    const void* src;
};
template <int Count, bool Trans> void load(void** lanes, int count) {
    simt_warp::requireFullWarp(count, "ldmatrix");
    unsigned char rows[Count][8][16];
    for (int i = 0; i < Count; ++i)
        for (int r = 0; r < 8; ++r) {
            const void* src = static_cast<Lane*>(lanes[8 * i + r])->src;
            simt_warp::requireAligned(src, 16, "ldmatrix row address", 8 * i + r);
            std::memcpy(rows[i][r], src, 16);
        }
    for (int lane = 0; lane < 32; ++lane) {
        void* dst = static_cast<Lane*>(lanes[lane])->dst;
        simt_warp::requireAligned(dst, 4, "ldmatrix destination", lane);
        for (int i = 0; i < Count; ++i) {
            std::uint32_t word;
            if (!Trans) {
                std::memcpy(&word, &rows[i][lane / 4][4 * (lane % 4)], 4);
            } else {
                std::uint16_t lo, hi;
                std::memcpy(&lo, &rows[i][2 * (lane % 4)][2 * (lane / 4)], 2);
                std::memcpy(&hi, &rows[i][2 * (lane % 4) + 1][2 * (lane / 4)], 2);
                word = std::uint32_t(lo) | std::uint32_t(hi) << 16;
            }
            std::memcpy(static_cast<unsigned char*>(dst) + 4 * i, &word, 4);
        }
    }
}
template <int Count, bool Trans> void run(void* dst, const void* src) {
    Lane lane{dst, src};
    ::simt::warpCollective(&lane, load<Count, Trans>);
}
} // namespace simt_ldmatrix
inline void ldmatrix_x1(void* dst, const void* src) { simt_ldmatrix::run<1, false>(dst, src); }
inline void ldmatrix_x2(void* dst, const void* src) { simt_ldmatrix::run<2, false>(dst, src); }
inline void ldmatrix_x4(void* dst, const void* src) { simt_ldmatrix::run<4, false>(dst, src); }
inline void ldmatrix_x1_trans(void* dst, const void* src) { simt_ldmatrix::run<1, true>(dst, src); }
inline void ldmatrix_x2_trans(void* dst, const void* src) { simt_ldmatrix::run<2, true>(dst, src); }
inline void ldmatrix_x4_trans(void* dst, const void* src) { simt_ldmatrix::run<4, true>(dst, src); }
} // namespace tl

// The runtime's mma section, emulated: the emitted code's own section (guarded by this macro)
// holds inline PTX; here the warp's fragments are gathered, multiplied (in double, or in 64-bit
// integers for s8) and scattered back.
#define TLC_RUNTIME_TL_CUDA_H_MMA
namespace tl {
namespace simt_mma {
template <typename Acc, typename InA, typename InB> struct Lane {
    Acc* c;
    const InA* a;
    const InB* b;
};
// Fragment positions, lane = 4 * g + t (PTX ISA, "Matrix Fragments for mma.m16n8k16" and
// "... for mma.m16n8k32" with 8-bit types): {row, column} of element i of A, B and C / D.
struct Pos {
    int row, col;
};
template <int K> Pos aPos(int g, int t, int i) {
    if (K == 16) return {g + 8 * ((i / 2) % 2), 2 * t + i % 2 + 8 * (i / 4)};
    return {g + 8 * ((i / 4) % 2), 4 * t + i % 4 + 16 * (i / 8)};
}
template <int K> Pos bPos(int g, int t, int i) {
    if (K == 16) return {2 * t + i % 2 + 8 * (i / 2), g};
    return {4 * t + i % 4 + 16 * (i / 4), g};
}
inline Pos cPos(int g, int t, int i) { return {g + 8 * (i / 2), 2 * t + i % 2}; }

template <typename W, typename T> W widen(T v) {
    if constexpr (std::is_integral_v<T>) return W(v);
    else return W(float(v));
}
template <typename T, typename W> T narrow(W v) {
    if constexpr (std::is_integral_v<T>) return T(std::uint32_t(std::uint64_t(v)));  // the low 32 bits
    else return T(float(v));
}

// m16n8kK: D = A (16 x K) * B (K x 8) + C, in W (double or long long).
template <int K, typename Acc, typename InA, typename InB> void multiply(void** lanes, int count) {
    using W = std::conditional_t<std::is_integral_v<Acc>, long long, double>;
    simt_warp::requireFullWarp(count, "mma.sync");
    W A[16][K], B[K][8], C[16][8];
    for (int lane = 0; lane < 32; ++lane) {
        const auto& l = *static_cast<Lane<Acc, InA, InB>*>(lanes[lane]);
        int g = lane / 4, t = lane % 4;
        for (int i = 0; i < K / 2; ++i) {
            Pos p = aPos<K>(g, t, i);
            A[p.row][p.col] = widen<W>(l.a[i]);
        }
        for (int i = 0; i < K / 4; ++i) {
            Pos p = bPos<K>(g, t, i);
            B[p.row][p.col] = widen<W>(l.b[i]);
        }
        for (int i = 0; i < 4; ++i) {
            Pos p = cPos(g, t, i);
            C[p.row][p.col] = widen<W>(l.c[i]);
        }
    }
    for (int lane = 0; lane < 32; ++lane) {
        const auto& l = *static_cast<Lane<Acc, InA, InB>*>(lanes[lane]);
        for (int i = 0; i < 4; ++i) {
            Pos p = cPos(lane / 4, lane % 4, i);
            W sum = C[p.row][p.col];
            for (int k = 0; k < K; ++k) sum += A[p.row][k] * B[k][p.col];
            l.c[i] = narrow<Acc>(sum);
        }
    }
}
template <int K, typename Acc, typename InA, typename InB> void run(Acc* c, const InA* a, const InB* b) {
    Lane<Acc, InA, InB> lane{c, a, b};
    ::simt::warpCollective(&lane, multiply<K, Acc, InA, InB>);
}
} // namespace simt_mma

inline void mma_m16n8k16_f32_f16(float* c, const __half* a, const __half* b) { simt_mma::run<16>(c, a, b); }
inline void mma_m16n8k16_f32_bf16(float* c, const __nv_bfloat16* a, const __nv_bfloat16* b) {
    simt_mma::run<16>(c, a, b);
}
inline void mma_m16n8k16_f16_f16(__half* c, const __half* a, const __half* b) { simt_mma::run<16>(c, a, b); }
inline void mma_m16n8k32_s32_s8(int* c, const std::int8_t* a, const std::int8_t* b) { simt_mma::run<32>(c, a, b); }
inline void mma_m16n8k32_f32_e4m3(float* c, const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b) {
    simt_mma::run<32>(c, a, b);
}
inline void mma_m16n8k32_f32_e5m2(float* c, const __nv_fp8_e5m2* a, const __nv_fp8_e5m2* b) {
    simt_mma::run<32>(c, a, b);
}
inline void mma_m16n8k32_f32_e4m3_e5m2(float* c, const __nv_fp8_e4m3* a, const __nv_fp8_e5m2* b) {
    simt_mma::run<32>(c, a, b);
}
inline void mma_m16n8k32_f32_e5m2_e4m3(float* c, const __nv_fp8_e5m2* a, const __nv_fp8_e4m3* b) {
    simt_mma::run<32>(c, a, b);
}
} // namespace tl

// The runtime's async_copy section, emulated with the simulator's per-thread groups
// (simt.h): a copy lands only when its thread waits for it, so a missing or too weak wait
// shows up as stale shared memory.
#define TLC_RUNTIME_TL_CUDA_H_ASYNC_COPY
namespace tl {
inline void cp_async_16(void* shared_dst, const void* global_src, bool valid) {
    ::simt::asyncCopy(shared_dst, valid ? global_src : nullptr, 16);  // zero-filled when !valid
}
inline void cp_async_commit() { ::simt::asyncCommit(); }
template <int N> inline void cp_async_wait_group() { ::simt::asyncWait(size_t(N)); }
inline void cp_async_wait_all() {
    ::simt::asyncCommit();
    ::simt::asyncWait(0);
}
} // namespace tl
#endif // SIMT_HIP

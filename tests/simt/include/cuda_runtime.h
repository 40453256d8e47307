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
#include <map>
#include <type_traits>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __cluster_dims__(...)  // to_cpp.py launches such kernels with simt::launchCluster
#define __shared__ static
#define __grid_constant__
#define __align__(n) __attribute__((aligned(n)))
#define __syncthreads() ::simt::barrier()

#define threadIdx (::simt::threadIndex())
#define blockIdx (::simt::blockIndex())
#define blockDim (::simt::blockDimension())
#define gridDim (::simt::gridDimension())

using dim3 = ::simt::dim3;
struct uint2 { unsigned int x, y; };
struct uint4 { unsigned int x, y, z, w; };

enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorNotSupported = 801 };
using cudaError = cudaError_t;
using cudaStream_t = struct CUstream_st*;
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

inline cudaError_t cudaGetLastError() { return cudaSuccess; }
// Kernels run when launched: a stream-ordered memset is a memset.
inline cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t = nullptr) {
    std::memset(p, value, bytes);
    return cudaSuccess;
}

// A persistent kernel's launcher asks for the SM count (tl::persistent_ctas): the simulator
// reports a small one (SIMT_SM_COUNT, default 3), so that each block of such a kernel loops
// over several tiles at the run layer's sizes.
inline int simtSmCount() {
    const char* e = std::getenv("SIMT_SM_COUNT");
    int n = e ? std::atoi(e) : 3;
    return n > 0 ? n : 3;
}
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
inline cudaError_t cudaGetDevice(int* device) {
    *device = 0;
    return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int) {
    if (attr != cudaDevAttrMultiProcessorCount) return cudaErrorInvalidValue;
    *value = simtSmCount();
    return cudaSuccess;
}

#ifndef SIMT_HIP
// Driver entry points (for tl::make_tensor_map_2d and make_tensor_map<Rank>): only cuTensorMapEncodeTiled, the stand-in
// of cuda.h here.
#include "cuda.h"
#define CUDART_VERSION 13000
enum cudaDriverEntryPointQueryResult {
    cudaDriverEntryPointSuccess = 0,
    cudaDriverEntryPointSymbolNotFound = 1,
    cudaDriverEntryPointVersionNotSufficent = 2
};
enum { cudaEnableDefault = 0 };
inline cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr, unsigned int, unsigned long long,
                                                    cudaDriverEntryPointQueryResult* status = nullptr) {
    const bool known = std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0;
    *funcPtr = known ? reinterpret_cast<void*>(&cuTensorMapEncodeTiled) : nullptr;
    if (status) *status = known ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}
inline cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                           cudaDriverEntryPointQueryResult* status = nullptr) {
    return cudaGetDriverEntryPointByVersion(symbol, funcPtr, 12000, flags, status);
}
#endif
template <typename F> cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int) { return cudaSuccess; }

template <typename T> T __shfl_xor_sync(unsigned, T value, int laneMask, int width = 32) {
    return ::simt::shuffle(::simt::ShuffleKind::Xor, value, laneMask, width);
}
template <typename T> T __shfl_down_sync(unsigned, T value, unsigned delta, int width = 32) {
    return ::simt::shuffle(::simt::ShuffleKind::Down, value, int(delta), width);
}
template <typename T> T __shfl_up_sync(unsigned, T value, unsigned delta, int width = 32) {
    return ::simt::shuffle(::simt::ShuffleKind::Up, value, int(delta), width);
}
template <typename T> T __shfl_sync(unsigned, T value, int srcLane, int width = 32) {
    return ::simt::shuffle(::simt::ShuffleKind::Idx, value, srcLane, width);
}
inline void __syncwarp(unsigned = 0xffffffffu) { ::simt::syncWarp(); }
// One OS thread runs every fiber: memory is ordered as it stands.
inline void __threadfence() {}
template <typename T> T atomicMax(T* address, T value) {
    T old = *address;
    if (value > old) *address = value;
    return old;
}
template <typename T> T atomicMin(T* address, T value) {
    T old = *address;
    if (value < old) *address = value;
    return old;
}
inline unsigned long long atomicCAS(unsigned long long* address, unsigned long long compare, unsigned long long value) {
    unsigned long long old = *address;
    if (old == compare) *address = value;
    return old;
}
inline unsigned __ballot_sync(unsigned, int pred) { return unsigned(::simt::ballot(pred != 0)); }
inline int __any_sync(unsigned, int pred) { return ::simt::ballot(pred != 0) != 0; }
inline int __all_sync(unsigned, int pred) {
    unsigned long long yes = ::simt::ballot(pred != 0);
    return yes == ::simt::liveLanes();
}
// __dp4a: the four signed (or unsigned) byte products of a and b, summed into c.
inline int __dp4a(int a, int b, int c) {
    for (int i = 0; i < 4; ++i) c += int(int8_t(a >> (8 * i))) * int(int8_t(b >> (8 * i)));
    return c;
}
inline unsigned __dp4a(unsigned a, unsigned b, unsigned c) {
    for (int i = 0; i < 4; ++i) c += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
    return c;
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

// The runtime's vector_moves section (tl_gpu.h), for CUDA and HIP alike: the same moves and
// stores after the alignment check the GPU's vector accesses make (a misaligned one faults there,
// where x86 would carry on), so a vector access the fast path takes for a tensor off the vector
// grid shows.
#define TLC_RUNTIME_TL_GPU_H_VECTOR_MOVES
namespace tl {
namespace simt_warp {
// The alignment an instruction needs of an address (ldmatrix's rows, vector accesses).
inline void requireAligned(const void* p, unsigned bytes, const char* what, int lane) {
    if (reinterpret_cast<std::uintptr_t>(p) % bytes != 0) {
        std::fprintf(stderr, "simt: %s: lane %d passes %p, not %u-byte aligned\n", what, lane, p, bytes);
        std::abort();
    }
}
// A vector access of `bytes` (16-byte pieces past 16).
inline void requireVectorAligned(const void* p, int bytes, const char* what) {
    requireAligned(p, unsigned(bytes < 16 ? bytes : 16), what, int(threadIdx.x % 32));
}
} // namespace simt_warp
template <int Bytes> void copy_vec(void* dst, const void* src) {
    static_assert(Bytes <= 16 || Bytes % 16 == 0, "vector moves past 16 bytes come in 16-byte pieces");
    simt_warp::requireVectorAligned(dst, Bytes, "tl::copy_vec destination");
    simt_warp::requireVectorAligned(src, Bytes, "tl::copy_vec source");
    std::memcpy(dst, src, Bytes);
}
template <typename T, typename... V> void store_vec(T* dst, V... values) {
    constexpr int Bytes = int(sizeof(T) * sizeof...(V));
    static_assert(Bytes <= 16, "one vector of at most 16 bytes");
    simt_warp::requireVectorAligned(dst, Bytes, "tl::store_vec destination");
    const T lanes[] = {T(values)...};
    std::memcpy(static_cast<void*>(dst), static_cast<const void*>(lanes), Bytes);
}
template <int Bytes> void fill_zero(void* dst) {
    static_assert(Bytes <= 16 || Bytes % 16 == 0, "vector moves past 16 bytes come in 16-byte pieces");
    simt_warp::requireVectorAligned(dst, Bytes, "tl::fill_zero destination");
    std::memset(dst, 0, Bytes);
}
} // namespace tl

inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float exp2f(float x) { return std::exp2(x); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __fdividef(float a, float b) { return a / b; }
// CUDA's and HIP's integer min/max device overloads (reductions of integer fragments use them).
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
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
} // namespace simt_warp
} // namespace tl

// The runtime's ldmatrix section, emulated (PTX ISA, "ldmatrix"): lane 8 * i + r gives the
// address of row r (16 bytes) of matrix i; lane l receives, for each matrix, the 32-bit word
// l % 4 of row l / 4, or with .trans the 16-bit elements [2 * (l % 4)][l / 4] and
// [2 * (l % 4) + 1][l / 4] (low half first).
#define TLC_RUNTIME_TL_CUDA_MMA_H_LDMATRIX
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
#define TLC_RUNTIME_TL_CUDA_MMA_H_MMA
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
#define TLC_RUNTIME_TL_CUDA_ASYNC_H_ASYNC_COPY
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

// The runtime's vector_atomic_add section (tl_cuda.h; red.global.add.v2/.v4.f32), emulated:
// each element added on its own, as on the GPU, after the alignment check the instruction
// makes (a misaligned vector faults there, so a fast path taken for a view off the grid shows).
#define TLC_RUNTIME_TL_CUDA_H_VECTOR_ATOMIC_ADD
namespace tl {
inline void atomic_add_v2(float* p, float a, float b) {
    simt_warp::requireVectorAligned(p, 8, "red.global.add.v2.f32");
    atomicAdd(p, a);
    atomicAdd(p + 1, b);
}
inline void atomic_add_v4(float* p, float a, float b, float c, float d) {
    simt_warp::requireVectorAligned(p, 16, "red.global.add.v4.f32");
    atomicAdd(p, a);
    atomicAdd(p + 1, b);
    atomicAdd(p + 2, c);
    atomicAdd(p + 3, d);
}
} // namespace tl

// ---- The runtime's Hopper sections, emulated (tl_cuda.h: smem_u32; tl_cuda_mbarrier.h,
// tl_cuda_tma.h, tl_cuda_wgmma.h: mbarrier, tma, wgmma, setmaxnreg; tma_host, tl_cuda_tma_host.h, is
// not replaced: it runs against the cuda.h stand-in) ----
#include <map>
#include <vector>

#define TLC_RUNTIME_TL_CUDA_H_SMEM_U32
namespace tl {
inline std::uint32_t smem_u32(const void* p) { return std::uint32_t(reinterpret_cast<std::uintptr_t>(p)); }
} // namespace tl

// mbarrier: the 64-bit word holds the emulation's state: pending arrivals (bits 0-20), the
// arrival count per phase (21-41), the transaction count (42-62, signed) and the phase parity
// (63). A phase completes when pending arrivals and transaction count are both zero: the
// parity flips and the pending count is reset. Waiting threads spin (simt::spinYield).
#define TLC_RUNTIME_TL_CUDA_MBARRIER_H_MBARRIER
namespace tl {
namespace simt_mbarrier {
struct State {
    std::uint32_t pending, expected;
    std::int32_t tx;
    std::uint32_t phase;
};
inline void fail(const std::uint64_t* bar, const char* what) {
    std::fprintf(stderr, "simt: mbarrier %p (thread %d): %s\n", static_cast<const void*>(bar),
                 ::simt::linearThreadIndex(), what);
    std::abort();
}
inline State load(const std::uint64_t* bar) {
    if (reinterpret_cast<std::uintptr_t>(bar) % 8 != 0) fail(bar, "not 8-byte aligned");
    const std::uint64_t v = *bar;
    State s;
    s.pending = std::uint32_t(v & 0x1FFFFF);
    s.expected = std::uint32_t((v >> 21) & 0x1FFFFF);
    std::int32_t tx = std::int32_t((v >> 42) & 0x1FFFFF);
    s.tx = tx & 0x100000 ? tx - 0x200000 : tx;
    s.phase = std::uint32_t(v >> 63);
    return s;
}
inline void store(std::uint64_t* bar, const State& s) {
    *bar = std::uint64_t(s.pending) | std::uint64_t(s.expected) << 21 |
           (std::uint64_t(std::uint32_t(s.tx)) & 0x1FFFFF) << 42 | std::uint64_t(s.phase) << 63;
    ::simt::noteProgress();
}
inline void settle(std::uint64_t* bar, State s) {
    if (s.tx <= -(1 << 20) || s.tx >= (1 << 20)) fail(bar, "transaction count out of range");
    if (s.pending == 0 && s.tx == 0) {
        s.phase ^= 1u;
        s.pending = s.expected;
    }
    store(bar, s);
}
inline void arrive(std::uint64_t* bar, std::int64_t expectBytes) {
    State s = load(bar);
    if (s.expected == 0) fail(bar, "arrive on a barrier that was not initialised");
    if (s.pending == 0) fail(bar, "more arrivals than the barrier's count");
    s.tx += std::int32_t(expectBytes);
    s.pending -= 1;
    settle(bar, s);
}
// The transaction side: bytes that landed (TMA loads).
inline void completeTx(std::uint64_t* bar, std::uint32_t bytes) {
    State s = load(bar);
    if (s.expected == 0) fail(bar, "TMA completes on a barrier that was not initialised");
    s.tx -= std::int32_t(bytes);
    settle(bar, s);
}
} // namespace simt_mbarrier
inline void mbarrier_init(std::uint64_t* bar, unsigned count) {
    if (count == 0 || count >= (1u << 20)) simt_mbarrier::fail(bar, "init count outside [1, 2^20)");
    simt_mbarrier::store(bar, simt_mbarrier::State{count, count, 0, 0});
}
inline void fence_barrier_init() {}
inline void mbarrier_arrive(std::uint64_t* bar) { simt_mbarrier::arrive(bar, 0); }
inline void mbarrier_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) { simt_mbarrier::arrive(bar, bytes); }
// False means "not yet": the thread yields first, so a loop over it lets the others run.
inline bool mbarrier_try_wait_parity(std::uint64_t* bar, unsigned parity) {
    const simt_mbarrier::State s = simt_mbarrier::load(bar);
    if (s.expected == 0) simt_mbarrier::fail(bar, "wait on a barrier that was not initialised");
    if (s.phase != (parity & 1u)) return true;
    ::simt::spinYield();
    return false;
}
inline void mbarrier_wait_parity(std::uint64_t* bar, unsigned parity) {
    while (!mbarrier_try_wait_parity(bar, parity)) {
    }
}
} // namespace tl

// Named barriers (bar.sync / bar.arrive with an id): simt::namedBarrier counts the arrivals.
#define TLC_RUNTIME_TL_CUDA_MBARRIER_H_NAMED_BARRIER
namespace tl {
inline void named_barrier_sync(int id, int threads) { ::simt::namedBarrier(id, threads, true); }
inline void named_barrier_arrive(int id, int threads) { ::simt::namedBarrier(id, threads, false); }
} // namespace tl

// TMA: a load lands at once, when the issuing thread calls it (threads must wait on the
// barrier before reading, so landing early changes nothing for a correct program), then
// completes its box size on the barrier. Elements outside the tensor read as zero (loads) or
// are dropped (stores). A store reads shared memory and writes global memory only when its
// thread waits for its group (tma_store_wait, tma_store_wait_read). Swizzle: the shared address of each element has its 16-byte-chunk bits
// XORed with the bits above bit 7, as the hardware does on shared addresses (here the host
// addresses of the simulator's shared arrays: align them as on the GPU).
#define TLC_RUNTIME_TL_CUDA_TMA_H_TMA
namespace tl {
namespace simt_tma {
inline ::simt::TensorMap mapOfRank(const CUtensorMap* map, std::uint32_t rank, const char* what) {
    const ::simt::TensorMap m = ::simt::decodeTensorMap(map);
    if (m.magic != ::simt::kTensorMapMagic || m.rank != rank) {
        std::fprintf(stderr, "simt: %s: not a %u-D tensor map made by cuTensorMapEncodeTiled\n", what, rank);
        std::abort();
    }
    return m;
}
inline unsigned char* swizzle(unsigned char* p, unsigned span) {
    if (span == 0) return p;
    std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
    a ^= ((a >> 7) & std::uintptr_t(span / 16 - 1)) << 4;
    return reinterpret_cast<unsigned char*>(a);
}
// Calls f(shared element address, global element address or null when outside) per box element;
// coords[d] is the box's start in dimension d (innermost first), the box is stored densely in
// that order (dimension 0 the row).
template <typename F>
void forBox(const ::simt::TensorMap& m, void* smem, const int* coords, const char* what, F f) {
    if (reinterpret_cast<std::uintptr_t>(smem) % 128 != 0) {
        std::fprintf(stderr, "simt: %s: shared address %p is not 128-byte aligned\n", what, smem);
        std::abort();
    }
    const std::uint64_t es = m.elementBytes;
    std::uint64_t elements = 1;
    for (std::uint32_t d = 0; d < m.rank; ++d) elements *= m.box[d];
    for (std::uint64_t e = 0; e < elements; ++e) {
        std::uint64_t rest = e, offset = 0;
        bool inside = true;
        for (std::uint32_t d = 0; d < m.rank; ++d) {
            const long long at = (long long)coords[d] + (long long)(rest % m.box[d]);
            rest /= m.box[d];
            inside = inside && at >= 0 && std::uint64_t(at) < m.dims[d];
            if (inside) offset += std::uint64_t(at) * (d == 0 ? es : m.strides[d - 1]);
        }
        f(swizzle(static_cast<unsigned char*>(smem) + e * es, m.swizzleSpan), inside ? m.base + offset : nullptr, es);
    }
}
template <std::uint32_t Rank> void load(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, const int (&c)[Rank]) {
    const char* what = Rank == 2 ? "tma_load_2d" : Rank == 3 ? "tma_load_3d" : Rank == 4 ? "tma_load_4d" : "tma_load_5d";
    const ::simt::TensorMap m = mapOfRank(map, Rank, what);
    forBox(m, smem_dst, c, what, [](unsigned char* s, const unsigned char* g, std::uint64_t es) {
        if (g) std::memcpy(s, g, es);
        else std::memset(s, 0, es);
    });
    std::uint64_t bytes = m.elementBytes;
    for (std::uint32_t d = 0; d < Rank; ++d) bytes *= m.box[d];
    simt_mbarrier::completeTx(bar, std::uint32_t(bytes));
}
} // namespace simt_tma
inline void tma_load_2d(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1) {
    simt_tma::load<2>(smem_dst, map, bar, {c0, c1});
}
inline void tma_load_3d(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1, int c2) {
    simt_tma::load<3>(smem_dst, map, bar, {c0, c1, c2});
}
inline void tma_load_4d(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1, int c2, int c3) {
    simt_tma::load<4>(smem_dst, map, bar, {c0, c1, c2, c3});
}
inline void tma_load_5d(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1, int c2, int c3,
                        int c4) {
    simt_tma::load<5>(smem_dst, map, bar, {c0, c1, c2, c3, c4});
}
namespace simt_tma {
// A store reads its shared source as late as the hardware may: when its thread waits for its
// group, so a source overwritten before that wait, or a missing wait, gives wrong results.
struct Store {
    ::simt::TensorMap map;
    const void* smem;
    int coords[5];  // innermost first, the map's rank of them
};
struct StoreQueue {
    unsigned long long block = 0;
    std::vector<Store> open;
    std::vector<std::vector<Store>> committed;  // oldest first
};
inline StoreQueue& stores() {
    static std::map<int, StoreQueue> queues;  // per thread of the block (of the cluster: each block's own)
    StoreQueue& q = queues[::simt::fiberIndex()];
    if (q.block != ::simt::blockSerial()) {
        if (!q.open.empty() || !q.committed.empty()) {
            std::fprintf(stderr, "simt: a block ended with TMA stores never waited for\n");
            std::abort();
        }
        q.block = ::simt::blockSerial();
    }
    return q;
}
inline void waitStores(int n) {
    StoreQueue& q = stores();
    while (int(q.committed.size()) > n) {
        for (const Store& st : q.committed.front())
            forBox(st.map, const_cast<void*>(st.smem), st.coords, "tma_store",
                   [](unsigned char* s, unsigned char* g, std::uint64_t es) {
                       if (g) std::memcpy(g, s, es);
                   });
        q.committed.erase(q.committed.begin());
    }
}
} // namespace simt_tma
inline void tma_store_2d(const CUtensorMap* map, const void* smem_src, int c0, int c1) {
    const ::simt::TensorMap m = simt_tma::mapOfRank(map, 2, "tma_store_2d");
    simt_tma::stores().open.push_back({m, smem_src, {c0, c1}});
}
inline void tma_store_3d(const CUtensorMap* map, const void* smem_src, int c0, int c1, int c2) {
    const ::simt::TensorMap m = simt_tma::mapOfRank(map, 3, "tma_store_3d");
    simt_tma::stores().open.push_back({m, smem_src, {c0, c1, c2}});
}
inline void tma_store_4d(const CUtensorMap* map, const void* smem_src, int c0, int c1, int c2, int c3) {
    const ::simt::TensorMap m = simt_tma::mapOfRank(map, 4, "tma_store_4d");
    simt_tma::stores().open.push_back({m, smem_src, {c0, c1, c2, c3}});
}
inline void tma_store_5d(const CUtensorMap* map, const void* smem_src, int c0, int c1, int c2, int c3, int c4) {
    const ::simt::TensorMap m = simt_tma::mapOfRank(map, 5, "tma_store_5d");
    simt_tma::stores().open.push_back({m, smem_src, {c0, c1, c2, c3, c4}});
}
inline void tma_store_commit() {
    simt_tma::StoreQueue& q = simt_tma::stores();
    q.committed.push_back(std::move(q.open));
    q.open.clear();
}
// Both waits write the global memory then: reads and writes are not told apart.
template <int N> void tma_store_wait() { simt_tma::waitStores(N); }
template <int N> void tma_store_wait_read() { simt_tma::waitStores(N); }
inline void fence_proxy_async_shared() {}
} // namespace tl

// wgmma: asynchronous as on the GPU. An mma records its operands (the descriptors, and
// pointers to each thread's accumulators and A registers) in its warpgroup's open group;
// commit_group closes the group; wait_group<N> runs the oldest groups until N are left: only
// then are the operand tiles read (through the descriptors, swizzle included) and the
// accumulators written, so a missing wait or a tile overwritten too early shows as a wrong
// result. Products are summed in double and rounded to f32 once.
// Clusters (tl_cuda_cluster.h, section cluster): the rank, barrier.cluster and mapa of
// simt.h; a remote arrival is an arrival on the peer's barrier; a multicast load lands in every
// masked block's pool at once and completes its bytes on each block's barrier.
#define TLC_RUNTIME_TL_CUDA_CLUSTER_H_CLUSTER
namespace tl {
inline unsigned cluster_ctarank() { return ::simt::clusterRank(); }
inline void cluster_sync() { ::simt::clusterBarrier(); }
inline void mbarrier_arrive_cluster(std::uint64_t* bar, unsigned cta) {
    simt_mbarrier::arrive(static_cast<std::uint64_t*>(::simt::clusterPeer(bar, cta)), 0);
}
namespace simt_cluster {
template <std::uint32_t Rank>
void multicast(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, const int (&c)[Rank], std::uint16_t mask) {
    if (mask == 0 || (mask >> ::simt::clusterBlocks()) != 0) {
        std::fprintf(stderr, "simt: multicast mask 0x%x outside a cluster of %u blocks\n", unsigned(mask),
                     ::simt::clusterBlocks());
        std::abort();
    }
    for (unsigned r = 0; r < ::simt::clusterBlocks(); ++r)
        if ((mask >> r) & 1u)
            simt_tma::load<Rank>(::simt::clusterPeer(smem_dst, r), map,
                                 static_cast<std::uint64_t*>(::simt::clusterPeer(bar, r)), c);
}
} // namespace simt_cluster
inline void tma_load_2d_multicast(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1,
                                  std::uint16_t mask) {
    simt_cluster::multicast<2>(smem_dst, map, bar, {c0, c1}, mask);
}
inline void tma_load_3d_multicast(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1, int c2,
                                  std::uint16_t mask) {
    simt_cluster::multicast<3>(smem_dst, map, bar, {c0, c1, c2}, mask);
}
inline void tma_load_4d_multicast(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1, int c2,
                                  int c3, std::uint16_t mask) {
    simt_cluster::multicast<4>(smem_dst, map, bar, {c0, c1, c2, c3}, mask);
}
inline void tma_load_5d_multicast(void* smem_dst, const CUtensorMap* map, std::uint64_t* bar, int c0, int c1, int c2,
                                  int c3, int c4, std::uint16_t mask) {
    simt_cluster::multicast<5>(smem_dst, map, bar, {c0, c1, c2, c3, c4}, mask);
}
} // namespace tl

#define TLC_RUNTIME_TL_CUDA_WGMMA_H_WGMMA
namespace tl {
namespace simt_wgmma {
enum class Elem { F16, BF16, E4M3, E5M2, S8 };
inline void fail(const char* what) {
    std::fprintf(stderr, "simt: wgmma: %s\n", what);
    std::abort();
}
// Descriptors hold 14 bits of the shared address; the simulator's shared arrays are host
// memory, so make_smem_desc remembers the pointers it saw in this block and a descriptor's
// address is taken to be the one with those low 18 bits nearest to them (the most recent on a
// tie).
// The block whose descriptors a wgmma being executed resolves (the scheduler runs it, not one of
// the block's threads); -1: the calling thread's.
inline int& resolvingBlock() {
    static int block = -1;
    return block;
}
inline std::vector<std::uintptr_t>& seen() {
    // Per block of a cluster: the blocks' pools are 2^18 bytes apart, their low bits alike.
    static std::vector<std::uintptr_t> pointers[::simt::kMaxClusterBlocks];
    static unsigned long long block = 0;
    if (block != ::simt::blockSerial()) {
        for (auto& p : pointers) p.clear();
        block = ::simt::blockSerial();
    }
    return pointers[resolvingBlock() >= 0 ? resolvingBlock() : int(::simt::clusterRank())];
}
inline void remember(const void* p) {
    const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(p);
    auto& v = seen();
    for (std::uintptr_t x : v)
        if (x == a) return;
    if (v.size() >= 256) v.erase(v.begin());
    v.push_back(a);
}
inline std::uintptr_t resolve(std::uint32_t low18) {
    if (seen().empty()) fail("descriptor without a make_smem_desc");
    std::uintptr_t best = 0;
    long long bestDistance = -1;
    for (auto it = seen().rbegin(); it != seen().rend(); ++it) {
        const std::uintptr_t p = *it;
        long long diff = (long long)((low18 - std::uint32_t(p & 0x3FFFF)) & 0x3FFFF);
        if (diff >= 0x20000) diff -= 0x40000;
        long long distance = diff < 0 ? -diff : diff;
        if (bestDistance < 0 || distance < bestDistance) bestDistance = distance, best = std::uintptr_t((long long)p + diff);
    }
    return best;
}
// The address of element (mn, k) of an operand tile (PTX ISA, "Shared Memory Matrix Layout" and
// "Matrix Descriptor Format"; see make_smem_desc in tl_cuda_wgmma.h).
inline const unsigned char* address(std::uint64_t desc, int mn, int k, int es, bool mnMajor) {
    const std::uintptr_t start = resolve(std::uint32_t(desc & 0x3FFF) << 4);
    const std::uint64_t lbo = ((desc >> 16) & 0x3FFF) << 4, sbo = ((desc >> 32) & 0x3FFF) << 4;
    if ((desc >> 49) & 7) fail("descriptor base offset other than 0 (not emulated)");
    const unsigned mode = unsigned(desc >> 62), span = mode == 1 ? 128 : mode == 2 ? 64 : mode == 3 ? 32 : 0;
    std::uint64_t off;
    if (!mnMajor) {
        const std::uint64_t kb = std::uint64_t(k) * es;
        off = span ? (mn / 8) * sbo + (mn % 8) * span + kb : (mn / 8) * sbo + (kb / 16) * lbo + (mn % 8) * 16 + kb % 16;
    } else {
        const std::uint64_t mb = std::uint64_t(mn) * es;
        off = span ? (mb / span) * lbo + (k / 8) * sbo + (k % 8) * span + mb % span
                   : (mb / 16) * sbo + (k / 8) * lbo + (k % 8) * 16 + mb % 16;
    }
    std::uintptr_t a = start + off;
    if (span) a ^= ((a >> 7) & std::uintptr_t(span / 16 - 1)) << 4;
    return reinterpret_cast<const unsigned char*>(a);
}
inline double value(const unsigned char* p, Elem e) {
    if (e == Elem::F16) {
        __half h;
        std::memcpy(&h, p, 2);
        return double(float(h));
    }
    if (e == Elem::BF16) {
        __nv_bfloat16 h;
        std::memcpy(&h, p, 2);
        return double(float(h));
    }
    if (e == Elem::S8) return double(*reinterpret_cast<const signed char*>(p));
    if (e == Elem::E5M2) {
        __nv_fp8_e5m2 h;
        std::memcpy(&h, p, 1);
        return double(float(h));
    }
    __nv_fp8_e4m3 h;
    std::memcpy(&h, p, 1);
    return double(float(h));
}
struct Op {
    int n = 0, k = 0;
    Elem elem = Elem::F16, elemB = Elem::F16;  // A's and B's element types (mixed fp8 differs)
    bool transA = false, transB = false, aInRegisters = false, scaleD = false;
    std::uint64_t descA = 0, descB = 0;
    float* d[128] = {};
    int* di[128] = {};  // s32 accumulators (Elem::S8)
    const unsigned char* a[128] = {};
    int block = 0;  // the issuing warpgroup's block in its cluster
};
struct Queue {
    unsigned long long block = 0;
    std::vector<Op> open;
    std::vector<std::vector<Op>> committed;  // oldest first
};
inline Queue& queue(int warpgroup) {
    static std::map<int, Queue> queues;
    Queue& q = queues[warpgroup];
    if (q.block != ::simt::blockSerial()) {
        if (!q.open.empty() || !q.committed.empty()) fail("a block ended with wgmma operations never waited for");
        q.block = ::simt::blockSerial();
    }
    return q;
}
inline void executeIn(const Op& op);
inline void execute(const Op& op) {
    resolvingBlock() = op.block;
    executeIn(op);
    resolvingBlock() = -1;
}
inline void executeIn(const Op& op) {
    const int es = op.elem == Elem::E4M3 || op.elem == Elem::E5M2 || op.elem == Elem::S8 ? 1 : 2;
    if (es != (op.elemB == Elem::F16 || op.elemB == Elem::BF16 ? 2 : 1)) fail("A and B of different widths");
    std::vector<double> A(64 * op.k), B(op.k * op.n);
    if (op.aInRegisters) {
        for (int t = 0; t < 128; ++t) {
            const int w = t / 32, g = (t % 32) / 4, q = t % 4;
            for (int i = 0; i < 8; ++i)
                A[(16 * w + g + 8 * ((i / 2) % 2)) * op.k + 2 * q + i % 2 + 8 * (i / 4)] = value(op.a[t] + i * es, op.elem);
        }
    } else {
        for (int m = 0; m < 64; ++m)
            for (int k = 0; k < op.k; ++k) A[m * op.k + k] = value(address(op.descA, m, k, es, op.transA), op.elem);
    }
    for (int n = 0; n < op.n; ++n)
        for (int k = 0; k < op.k; ++k) B[k * op.n + n] = value(address(op.descB, n, k, es, op.transB), op.elemB);
    for (int t = 0; t < 128; ++t) {
        const int w = t / 32, g = (t % 32) / 4, q = t % 4;
        for (int i = 0; i < op.n / 2; ++i) {
            const int row = 16 * w + g + 8 * ((i / 2) % 2), col = 8 * (i / 4) + 2 * q + i % 2;
            double sum = !op.scaleD ? 0.0 : op.elem == Elem::S8 ? double(op.di[t][i]) : double(op.d[t][i]);
            for (int k = 0; k < op.k; ++k) sum += A[row * op.k + k] * B[k * op.n + col];
            if (op.elem == Elem::S8) op.di[t][i] = int(sum);  // exact: products of 8-bit integers
            else op.d[t][i] = float(sum);
        }
    }
}
struct Lane {
    int warpgroup = 0;
    float* d = nullptr;
    int* di = nullptr;
    const void* a = nullptr;
    std::uint64_t descA = 0, descB = 0;
    bool scaleD = false;
    int waitN = 0;
};
inline void requireWarpgroup(int count, const char* what) {
    if (count != 128) {
        std::fprintf(stderr, "simt: %s with %d of 128 threads of the warpgroup\n", what, count);
        std::abort();
    }
}
template <int N, int K, Elem E, Elem EB, bool TransA, bool TransB, bool ARegs> void issue(void** lanes, int count) {
    requireWarpgroup(count, "wgmma.mma_async");
    const Lane& first = *static_cast<Lane*>(lanes[0]);
    Op op;
    op.n = N, op.k = K, op.elem = E, op.elemB = EB, op.transA = TransA, op.transB = TransB, op.aInRegisters = ARegs;
    op.descA = first.descA, op.descB = first.descB, op.scaleD = first.scaleD;
    op.block = int(size_t(first.warpgroup) * 128 / ::simt::state().ctaThreads);
    for (int t = 0; t < 128; ++t) {
        const Lane& l = *static_cast<Lane*>(lanes[t]);
        if (l.descA != op.descA || l.descB != op.descB || l.scaleD != op.scaleD)
            fail("threads of the warpgroup pass different descriptors or scale-d");
        op.d[t] = l.d;
        op.di[t] = l.di;
        op.a[t] = static_cast<const unsigned char*>(l.a);
    }
    queue(first.warpgroup).open.push_back(op);
}
inline void fence(void**, int count) { requireWarpgroup(count, "wgmma.fence"); }
inline void commit(void** lanes, int count) {
    requireWarpgroup(count, "wgmma.commit_group");
    Queue& q = queue(static_cast<Lane*>(lanes[0])->warpgroup);
    q.committed.push_back(std::move(q.open));
    q.open.clear();
}
inline void wait(void** lanes, int count) {
    requireWarpgroup(count, "wgmma.wait_group");
    const Lane& first = *static_cast<Lane*>(lanes[0]);
    Queue& q = queue(first.warpgroup);
    while (int(q.committed.size()) > first.waitN) {
        for (const Op& op : q.committed.front()) execute(op);
        q.committed.erase(q.committed.begin());
    }
}
inline Lane lane() {
    Lane l;
    l.warpgroup = ::simt::fiberIndex() / (4 * ::simt::warpSize());  // the cluster's blocks' apart
    return l;
}
template <int N, int K, Elem E, bool TransA, bool TransB, bool ARegs, typename D, Elem EB = E>
void run(D* d, const void* a, std::uint64_t descA, std::uint64_t descB, bool scaleD) {
    static_assert(N == 32 || N == 64 || N == 128 || N == 256, "wgmma helpers for N = 32, 64, 128, 256");
    Lane l = lane();
    if constexpr (std::is_same_v<D, int>) l.di = d;
    else l.d = d;
    l.a = a, l.descA = descA, l.descB = descB, l.scaleD = scaleD;
    ::simt::warpgroupCollective(&l, issue<N, K, E, EB, TransA, TransB, ARegs>);
}
} // namespace simt_wgmma
inline void wgmma_fence() {
    simt_wgmma::Lane l = simt_wgmma::lane();
    ::simt::warpgroupCollective(&l, simt_wgmma::fence);
}
inline void wgmma_commit_group() {
    simt_wgmma::Lane l = simt_wgmma::lane();
    ::simt::warpgroupCollective(&l, simt_wgmma::commit);
}
template <int N> void wgmma_wait_group() {
    simt_wgmma::Lane l = simt_wgmma::lane();
    l.waitN = N;
    ::simt::warpgroupCollective(&l, simt_wgmma::wait);
}
template <int R> void wgmma_fence_operand(float*) {}
template <int R> void wgmma_fence_operand(int*) {}
// The rs forms' A registers, 16-bit pairs packed low half first: the bytes of the fragment.
template <int R, typename T> void wgmma_pack_operand(std::uint32_t* regs, const T* a) {
    static_assert(sizeof(T) == 2, "16-bit elements");
    std::memcpy(regs, a, 4 * R);
}
inline std::uint64_t make_smem_desc(const void* smem, int swizzleBytes, unsigned leadingBytes, unsigned strideBytes) {
    simt_wgmma::remember(smem);
    const std::uint64_t mode = swizzleBytes == 128 ? 1 : swizzleBytes == 64 ? 2 : swizzleBytes == 32 ? 3 : 0;
    return std::uint64_t((reinterpret_cast<std::uintptr_t>(smem) & 0x3FFFF) >> 4) |
           std::uint64_t((leadingBytes & 0x3FFFF) >> 4) << 16 | std::uint64_t((strideBytes & 0x3FFFF) >> 4) << 32 |
           mode << 62;
}
inline std::uint64_t wgmma_desc_advance(std::uint64_t desc, unsigned bytes) { return desc + std::uint64_t(bytes >> 4); }
template <int N, bool TransA = false, bool TransB = false>
void wgmma_m64nNk16_f32_f16_ss(float* d, std::uint64_t descA, std::uint64_t descB, bool scaleD) {
    simt_wgmma::run<N, 16, simt_wgmma::Elem::F16, TransA, TransB, false>(d, nullptr, descA, descB, scaleD);
}
template <int N, bool TransA = false, bool TransB = false>
void wgmma_m64nNk16_f32_bf16_ss(float* d, std::uint64_t descA, std::uint64_t descB, bool scaleD) {
    simt_wgmma::run<N, 16, simt_wgmma::Elem::BF16, TransA, TransB, false>(d, nullptr, descA, descB, scaleD);
}
template <int N, bool TransB = false>
void wgmma_m64nNk16_f32_f16_rs(float* d, const std::uint32_t* a, std::uint64_t descB, bool scaleD) {
    simt_wgmma::run<N, 16, simt_wgmma::Elem::F16, false, TransB, true>(d, a, 0, descB, scaleD);
}
template <int N, bool TransB = false>
void wgmma_m64nNk16_f32_bf16_rs(float* d, const std::uint32_t* a, std::uint64_t descB, bool scaleD) {
    simt_wgmma::run<N, 16, simt_wgmma::Elem::BF16, false, TransB, true>(d, a, 0, descB, scaleD);
}
template <int N> void wgmma_m64nNk32_f32_e4m3_ss(float* d, std::uint64_t descA, std::uint64_t descB, bool scaleD) {
    simt_wgmma::run<N, 32, simt_wgmma::Elem::E4M3, false, false, false>(d, nullptr, descA, descB, scaleD);
}
template <int N> void wgmma_m64nNk32_f32_e5m2_ss(float* d, std::uint64_t descA, std::uint64_t descB, bool scaleD) {
    simt_wgmma::run<N, 32, simt_wgmma::Elem::E5M2, false, false, false>(d, nullptr, descA, descB, scaleD);
}
template <int N>
void wgmma_m64nNk32_f32_e4m3_e5m2_ss(float* d, std::uint64_t descA, std::uint64_t descB, bool scaleD) {
    simt_wgmma::run<N, 32, simt_wgmma::Elem::E4M3, false, false, false, float, simt_wgmma::Elem::E5M2>(
        d, nullptr, descA, descB, scaleD);
}
template <int N>
void wgmma_m64nNk32_f32_e5m2_e4m3_ss(float* d, std::uint64_t descA, std::uint64_t descB, bool scaleD) {
    simt_wgmma::run<N, 32, simt_wgmma::Elem::E5M2, false, false, false, float, simt_wgmma::Elem::E4M3>(
        d, nullptr, descA, descB, scaleD);
}
template <int N> void wgmma_m64nNk32_s32_s8_ss(int* d, std::uint64_t descA, std::uint64_t descB, bool scaleD) {
    simt_wgmma::run<N, 32, simt_wgmma::Elem::S8, false, false, false>(d, nullptr, descA, descB, scaleD);
}
} // namespace tl

// setmaxnreg: the argument rules, and the block's register pool (simt::registersIncrease): the
// consumers can take only what the producers gave back.
#define TLC_RUNTIME_TL_CUDA_WGMMA_H_SETMAXNREG
namespace tl {
template <int N> void setmaxnreg_inc() {
    static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes 24..256, a multiple of 8");
    ::simt::registersIncrease(N);
}
template <int N> void setmaxnreg_dec() {
    static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes 24..256, a multiple of 8");
    ::simt::registersDecrease(N);
}
} // namespace tl
#endif // SIMT_HIP

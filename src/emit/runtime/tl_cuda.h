// tl_cuda.h -- device helpers for tlc's CUDA output. Sections: see tl_common.h.
#pragma once

#include <cuda_runtime.h>

#include "tl_common.h"
#include "tl_gpu.h"

// tlc:section warp
namespace tl {
// The expert level's warp reductions (docs/language.md): a butterfly over groups of Width
// lanes (a power of two dividing the warp), every lane of a group ending with the group's
// result. Every lane of the warp must take part.
template <int Width, typename T> __device__ __forceinline__ T warp_reduce_sum(T v) {
    for (int offset = Width / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset, Width);
    return v;
}
template <int Width, typename T> __device__ __forceinline__ T warp_reduce_max(T v) {
    for (int offset = Width / 2; offset > 0; offset /= 2) {
        T o = __shfl_xor_sync(0xffffffffu, v, offset, Width);
        v = o > v ? o : v;
    }
    return v;
}
template <int Width, typename T> __device__ __forceinline__ T warp_reduce_min(T v) {
    for (int offset = Width / 2; offset > 0; offset /= 2) {
        T o = __shfl_xor_sync(0xffffffffu, v, offset, Width);
        v = o < v ? o : v;
    }
    return v;
}
} // namespace tl
// tlc:end

// tlc:section math
namespace tl {
__device__ __forceinline__ float sigmoid(float x) { return 1.0f / (1.0f + __expf(-x)); }
__device__ __forceinline__ double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
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

// tlc:section debug
#include <cstdio>
namespace tl {
// Reports a failed assert(...) of the .tl source and stops the kernel.
__device__ inline void assert_fail(const char* where, const char* condition) {
    printf("%s: assertion failed: %s (block %d %d %d, thread %d)\n", where, condition, int(blockIdx.x),
           int(blockIdx.y), int(blockIdx.z), int(threadIdx.x));
    __trap();
}
} // namespace tl
// tlc:end

// tlc:section ldmatrix
#include <cstdint>
namespace tl {
// ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}.shared.b16 (sm_75 and later; PTX ISA, "ldmatrix"):
// the warp loads one, two or four 8x8 matrices of 16-bit elements from shared memory into
// registers. Lane 8 * i + r passes in `src` the generic address of row r of matrix i (16 bytes,
// 16-byte aligned, in shared memory); lanes past the last matrix (16..31 for .x2, 8..31 for
// .x1) pass any valid shared address. `dst` points to the lane's registers in memory (4-byte
// aligned): 1, 2 or 4 32-bit words, word i from matrix i, written whole.
// Without .trans, lane l receives row l / 4, elements 2 * (l % 4) and 2 * (l % 4) + 1 (low half
// first); with .trans, elements [2 * (l % 4)][l / 4] and [2 * (l % 4) + 1][l / 4] of the stored
// matrix. For 8-bit data (rows of 16 bytes) a lane receives bytes 4 * (l % 4) .. 4 * (l % 4) + 3
// of row l / 4, the layout of the 8-bit mma fragments.
__device__ __forceinline__ uint32_t shared_address(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void ldmatrix_x1(void* dst, const void* src) {
    uint32_t* r = static_cast<uint32_t*>(dst);
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(shared_address(src)));
}
__device__ __forceinline__ void ldmatrix_x2(void* dst, const void* src) {
    uint32_t* r = static_cast<uint32_t*>(dst);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(shared_address(src)));
}
__device__ __forceinline__ void ldmatrix_x4(void* dst, const void* src) {
    uint32_t* r = static_cast<uint32_t*>(dst);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(src)));
}
__device__ __forceinline__ void ldmatrix_x1_trans(void* dst, const void* src) {
    uint32_t* r = static_cast<uint32_t*>(dst);
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(shared_address(src)));
}
__device__ __forceinline__ void ldmatrix_x2_trans(void* dst, const void* src) {
    uint32_t* r = static_cast<uint32_t*>(dst);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(shared_address(src)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(void* dst, const void* src) {
    uint32_t* r = static_cast<uint32_t*>(dst);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(src)));
}
} // namespace tl
// tlc:end

// tlc:section mma
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cstdint>
namespace tl {
// Two 16-bit values in one 32-bit register, the first in the low half (no alignment needed).
__device__ __forceinline__ uint32_t pack_pair(__half lo, __half hi) {
    return uint32_t(__half_as_ushort(lo)) | uint32_t(__half_as_ushort(hi)) << 16;
}
__device__ __forceinline__ uint32_t pack_pair(__nv_bfloat16 lo, __nv_bfloat16 hi) {
    return uint32_t(__bfloat16_as_ushort(lo)) | uint32_t(__bfloat16_as_ushort(hi)) << 16;
}
// One warp-wide mma.sync.m16n8k16 with f32 accumulators (sm_80 and later). Each lane passes
// its fragments in the instruction's layout (PTX ISA, "Matrix Fragments for mma.m16n8k16"):
// c[0..3] its four accumulators, a[0..7] its eight A elements, b[0..3] its four B elements.
__device__ __forceinline__ void mma_m16n8k16_f32_f16(float* c, const __half* a, const __half* b) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(pack_pair(a[0], a[1])), "r"(pack_pair(a[2], a[3])), "r"(pack_pair(a[4], a[5])),
                   "r"(pack_pair(a[6], a[7])), "r"(pack_pair(b[0], b[1])), "r"(pack_pair(b[2], b[3])));
}
__device__ __forceinline__ void mma_m16n8k16_f32_bf16(float* c, const __nv_bfloat16* a, const __nv_bfloat16* b) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(pack_pair(a[0], a[1])), "r"(pack_pair(a[2], a[3])), "r"(pack_pair(a[4], a[5])),
                   "r"(pack_pair(a[6], a[7])), "r"(pack_pair(b[0], b[1])), "r"(pack_pair(b[2], b[3])));
}
// The same with f16 accumulators: c[0..3] in the positions of the f32 form, packed in pairs
// (c[0], c[1]) and (c[2], c[3]) for the instruction.
__device__ __forceinline__ void mma_m16n8k16_f16_f16(__half* c, const __half* a, const __half* b) {
    uint32_t c01 = pack_pair(c[0], c[1]), c23 = pack_pair(c[2], c[3]);
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 "
                 "{%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};"
                 : "+r"(c01), "+r"(c23)
                 : "r"(pack_pair(a[0], a[1])), "r"(pack_pair(a[2], a[3])), "r"(pack_pair(a[4], a[5])),
                   "r"(pack_pair(a[6], a[7])), "r"(pack_pair(b[0], b[1])), "r"(pack_pair(b[2], b[3])));
    c[0] = __ushort_as_half(static_cast<unsigned short>(c01 & 0xffffu));
    c[1] = __ushort_as_half(static_cast<unsigned short>(c01 >> 16));
    c[2] = __ushort_as_half(static_cast<unsigned short>(c23 & 0xffffu));
    c[3] = __ushort_as_half(static_cast<unsigned short>(c23 >> 16));
}
// Four one-byte elements in one 32-bit register, p[0] in the low byte (no alignment needed).
template <typename T>
__device__ __forceinline__ uint32_t pack_quad(const T* p) {
    static_assert(sizeof(T) == 1, "four 8-bit elements");
    const unsigned char* b = reinterpret_cast<const unsigned char*>(p);
    return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
}
// mma.sync.m16n8k32 on 8-bit inputs (PTX ISA, "Matrix Fragments for mma.m16n8k32"); with
// lane = 4 * g + t: a[0..15], A element i at row g + 8 * ((i / 4) % 2), column
// 4 * t + i % 4 + 16 * (i / 8); b[0..7], B element i at row 4 * t + i % 4 + 16 * (i / 4),
// column g; c[0..3] as in m16n8k16. s8 x s8 -> s32 (sm_80 and later).
__device__ __forceinline__ void mma_m16n8k32_s32_s8(int* c, const int8_t* a, const int8_t* b) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
                 : "r"(pack_quad(a)), "r"(pack_quad(a + 4)), "r"(pack_quad(a + 8)), "r"(pack_quad(a + 12)),
                   "r"(pack_quad(b)), "r"(pack_quad(b + 4)));
}
// fp8 x fp8 -> f32 (sm_89 and later; on older GPUs the kernel traps): mma_m16n8k32_f32_X for
// X x X, mma_m16n8k32_f32_X_Y for an X-typed A and a Y-typed B. The element types are the
// toolkit's (tlc's CUDA output uses __nv_fp8_e4m3 / __nv_fp8_e5m2 for f8e4m3 / f8e5m2).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define TL_MMA_FP8(name, A, B, types)                                                                       \
    __device__ __forceinline__ void name(float* c, const A* a, const B* b) {                                \
        asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." types ".f32 "                                 \
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"                       \
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                       \
                     : "r"(pack_quad(a)), "r"(pack_quad(a + 4)), "r"(pack_quad(a + 8)), "r"(pack_quad(a + 12)), \
                       "r"(pack_quad(b)), "r"(pack_quad(b + 4)));                                           \
    }
#else
#define TL_MMA_FP8(name, A, B, types)                                        \
    __device__ __forceinline__ void name(float* c, const A* a, const B* b) { \
        (void)c, (void)a, (void)b;                                           \
        __trap(); /* fp8 mma needs sm_89 */                                  \
    }
#endif
TL_MMA_FP8(mma_m16n8k32_f32_e4m3, __nv_fp8_e4m3, __nv_fp8_e4m3, "e4m3.e4m3")
TL_MMA_FP8(mma_m16n8k32_f32_e5m2, __nv_fp8_e5m2, __nv_fp8_e5m2, "e5m2.e5m2")
TL_MMA_FP8(mma_m16n8k32_f32_e4m3_e5m2, __nv_fp8_e4m3, __nv_fp8_e5m2, "e4m3.e5m2")
TL_MMA_FP8(mma_m16n8k32_f32_e5m2_e4m3, __nv_fp8_e5m2, __nv_fp8_e4m3, "e5m2.e4m3")
#undef TL_MMA_FP8
} // namespace tl
// tlc:end

// tlc:section async_copy
namespace tl {
// 16 bytes from global to shared memory without passing through registers (cp.async, sm_80 and
// later); when `valid` is false nothing is read and the 16 bytes are zero-filled.
__device__ __forceinline__ void cp_async_16(void* shared_dst, const void* global_src, bool valid) {
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(shared_dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(global_src), "r"(valid ? 16 : 0)
                 : "memory");
}
// Waits until every cp.async this thread issued has landed in shared memory.
__device__ __forceinline__ void cp_async_wait_all() {
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
}
// Closes the group of this thread's cp.async issued since the last commit (a software
// pipeline commits once per step, an empty group included).
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
// Waits until at most N of this thread's most recently committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
} // namespace tl
// tlc:end

// ---- Hopper (sm_90 / sm_90a) ----------------------------------------------------------------
// mbarrier, TMA (cp.async.bulk.tensor), wgmma and setmaxnreg. Each helper is inline PTX for the
// architectures that have the instruction and traps elsewhere, so the header compiles for every
// target (and in the host pass). PTX ISA references: "mbarrier", "cp.async.bulk.tensor",
// "Asynchronous Warpgroup Level Matrix Multiply-Accumulate" (wgmma), "setmaxnreg".

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

// tlc:section mbarrier needs=smem_u32
#include <cstdint>
namespace tl {
// A shared-memory mbarrier is one 8-byte-aligned uint64_t in shared memory. A phase completes
// when `count` arrivals have happened and the transaction count (bytes announced with
// arrive_expect_tx, taken off by TMA loads as they land) is back to zero; the barrier then
// starts the next phase. Phases alternate parity 0, 1, 0, ... starting at 0.
// arrive and wait need sm_80; expect_tx, try_wait and fence_barrier_init sm_90.

// Initialises the barrier for `count` arrivals per phase (1 <= count < 2^20). One thread does
// this, then fence_barrier_init() and a __syncthreads() before anyone uses the barrier.
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, unsigned count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count) : "memory");
#else
    (void)bar, (void)count;
    __trap();
#endif
}
// Makes barrier initialisation visible to the async proxy (TMA) and the cluster (sm_90).
__device__ __forceinline__ void fence_barrier_init() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#else
    __trap();
#endif
}
// One arrival of this thread on the current phase.
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared.b64 state, [%0];\n}" ::"r"(smem_u32(bar)) : "memory");
#else
    (void)bar;
    __trap();
#endif
}
// Announces `bytes` more bytes of transactions (TMA loads that will complete on this barrier)
// for the current phase, then arrives (sm_90). The usual pattern: one thread calls this with the
// total size of the boxes it then loads, with a barrier initialised for one arrival.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}" ::"r"(
                     smem_u32(bar)),
                 "r"(bytes)
                 : "memory");
#else
    (void)bar, (void)bytes;
    __trap();
#endif
}
// True when the phase of parity `parity` (0 or 1) has completed, i.e. the barrier's current
// phase has the other parity. try_wait (sm_90) may suspend the thread for a while before it
// returns false; test_wait (sm_80) returns at once.
__device__ __forceinline__ bool mbarrier_try_wait_parity(uint64_t* bar, unsigned parity) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    uint32_t done;
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(smem_u32(bar)), "r"(parity)
                 : "memory");
    return done != 0;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    uint32_t done;
    asm volatile("{\n.reg .pred p;\nmbarrier.test_wait.parity.shared.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(smem_u32(bar)), "r"(parity)
                 : "memory");
    return done != 0;
#else
    (void)bar, (void)parity;
    __trap();
    return false;
#endif
}
// Waits until the phase of parity `parity` has completed (a loop over try_wait).
__device__ __forceinline__ void mbarrier_wait_parity(uint64_t* bar, unsigned parity) {
    while (!mbarrier_try_wait_parity(bar, parity)) {
    }
}
} // namespace tl
// tlc:end

// tlc:section tma needs=mbarrier
#include <cuda.h>
#include <cstdint>
namespace tl {
// Tensor-memory-accelerator copies of 2-D boxes (sm_90). `map` is the address of a CUtensorMap
// made on the host (tl::make_tensor_map_2d, section tma_host) and passed to the kernel as a
// `const __grid_constant__ CUtensorMap` parameter (or kept in constant/global memory). Box
// coordinates are in elements, innermost first: c0 is the column (the contiguous dimension),
// c1 the row; they may be negative or run past the tensor's end: elements outside it are
// zero-filled on loads and dropped on stores. In shared memory the box is stored densely, row
// after row (rows of boxCols * elementSize bytes), with the map's swizzle applied to the shared
// addresses: for a span of S = 32, 64 or 128 bytes, bits [4, 4 + log2(S / 16)) of the address
// (the 16-byte chunk) are XORed with the bits above bit 7 ((address >> 7) % (S / 16)); the
// pattern repeats every 8 * S bytes, so align swizzled boxes to 8 * S (1024 for 128B).
// Shared destinations and sources must be 128-byte aligned.

// Loads the box at (c0, c1) into smem_dst; when it has landed, its size in bytes (the whole
// box, zero-filled part included) completes on `bar` (announce it with
// mbarrier_arrive_expect_tx). One thread issues it.
__device__ __forceinline__ void tma_load_2d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(
            smem_u32(smem_dst)),
        "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
        : "memory");
#else
    (void)smem_dst, (void)map, (void)bar, (void)c0, (void)c1;
    __trap();
#endif
}
// Boxes of 3- to 5-D tensor maps (tl::make_tensor_map<Rank>), coordinates innermost first as
// for tma_load_2d; the box lands densely with its innermost side as the row, so a box of 1 in
// every dimension but two is a 2-D tile.
__device__ __forceinline__ void tma_load_3d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1,
                                            int c2) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], "
                 "[%2];" ::"r"(smem_u32(smem_dst)),
                 "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
#else
    (void)smem_dst, (void)map, (void)bar, (void)c0, (void)c1, (void)c2;
    __trap();
#endif
}
__device__ __forceinline__ void tma_load_4d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1,
                                            int c2, int c3) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, "
                 "%6}], [%2];" ::"r"(smem_u32(smem_dst)),
                 "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
#else
    (void)smem_dst, (void)map, (void)bar, (void)c0, (void)c1, (void)c2, (void)c3;
    __trap();
#endif
}
__device__ __forceinline__ void tma_load_5d(void* smem_dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1,
                                            int c2, int c3, int c4) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, "
                 "%6, %7}], [%2];" ::"r"(smem_u32(smem_dst)),
                 "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
                 : "memory");
#else
    (void)smem_dst, (void)map, (void)bar, (void)c0, (void)c1, (void)c2, (void)c3, (void)c4;
    __trap();
#endif
}
// Stores the box at (c0, c1) from smem_src (laid out as a load would leave it). Asynchronous:
// make the threads' shared writes visible to TMA first (fence_proxy_async_shared() by every
// writing thread, then __syncthreads()), and commit + wait before reusing smem_src or
// finishing the kernel. One thread issues it.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* smem_src, int c0, int c1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(map),
                 "r"(smem_u32(smem_src)), "r"(c0), "r"(c1)
                 : "memory");
#else
    (void)map, (void)smem_src, (void)c0, (void)c1;
    __trap();
#endif
}
// The same for 3- to 5-D tensor maps, coordinates innermost first (as tma_load_3d .. 5d).
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* smem_src, int c0, int c1, int c2) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(map),
                 "r"(smem_u32(smem_src)), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
#else
    (void)map, (void)smem_src, (void)c0, (void)c1, (void)c2;
    __trap();
#endif
}
__device__ __forceinline__ void tma_store_4d(const CUtensorMap* map, const void* smem_src, int c0, int c1, int c2,
                                             int c3) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];" ::"l"(map),
                 "r"(smem_u32(smem_src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
                 : "memory");
#else
    (void)map, (void)smem_src, (void)c0, (void)c1, (void)c2, (void)c3;
    __trap();
#endif
}
__device__ __forceinline__ void tma_store_5d(const CUtensorMap* map, const void* smem_src, int c0, int c1, int c2,
                                             int c3, int c4) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];" ::"l"(map),
                 "r"(smem_u32(smem_src)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
                 : "memory");
#else
    (void)map, (void)smem_src, (void)c0, (void)c1, (void)c2, (void)c3, (void)c4;
    __trap();
#endif
}
// Closes the group of this thread's TMA stores issued since the last commit.
__device__ __forceinline__ void tma_store_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#else
    __trap();
#endif
}
// Waits until at most N of this thread's committed store groups are still in flight (their
// writes to global memory done).
template <int N>
__device__ __forceinline__ void tma_store_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
#else
    __trap();
#endif
}
// Waits until at most N of this thread's committed store groups still read their shared
// sources: the shared memory of the others may be written again (and the block may exit; their
// writes to global memory complete by the end of the kernel).
template <int N>
__device__ __forceinline__ void tma_store_wait_read() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
#else
    __trap();
#endif
}
// Orders this thread's generic-proxy accesses to shared memory before later async-proxy (TMA,
// wgmma) accesses: after writing a tile a TMA store or a wgmma will read.
__device__ __forceinline__ void fence_proxy_async_shared() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#else
    __trap();
#endif
}
} // namespace tl
// tlc:end

// tlc:section tma_host
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cstdint>
namespace tl {
// Host side of TMA: make_tensor_map_2d fills *out with a tensor map of a row-major 2-D tensor (`rows` x `cols`
// elements of `dtype`, rows `rowStrideBytes` apart, starting at device address `base`) whose
// boxes are boxRows x boxCols elements, with `swizzle`. Reaches the driver's
// cuTensorMapEncodeTiled through the runtime (cudaGetDriverEntryPointByVersion, or
// cudaGetDriverEntryPoint before CUDA 12.5), so programs need not link libcuda. Returns
// cudaErrorInvalidValue, without calling the driver, when TMA's rules fail: base and row stride
// 16-byte aligned, stride >= cols * element size and < 2^40, sizes in [1, 2^32], box sides in
// [1, 256], the box's row (boxCols * element size) a multiple of 16 bytes and, with a swizzle,
// exactly the swizzle span (32, 64 or 128 bytes; the driver allows less, tlc's layouts assume
// equal); only the 16-byte-chunk swizzles (NONE, 32B, 64B, 128B). cudaErrorNotSupported when
// the driver has no cuTensorMapEncodeTiled, cudaErrorInvalidValue when it refuses the map.
inline unsigned tensor_map_element_bytes(CUtensorMapDataType dtype) {
    switch (dtype) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
    default: return 0;  // packed sub-byte types: not supported here
    }
}
inline unsigned tensor_map_swizzle_span(CUtensorMapSwizzle swizzle) {
    switch (swizzle) {
    case CU_TENSOR_MAP_SWIZZLE_NONE: return 0;
    case CU_TENSOR_MAP_SWIZZLE_32B: return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B: return 64;
    case CU_TENSOR_MAP_SWIZZLE_128B: return 128;
    default: return ~0u;
    }
}
// The same for a tensor of Rank (1 to 5) dimensions, each given outermost first as the tile
// language writes them: sizes[Rank] in elements, strideBytes[Rank - 1] the byte strides of all
// but the innermost (contiguous) dimension, box[Rank] the box's extent in each (1 where the tile
// squeezes a dimension). The rules above hold per dimension: every stride a multiple of 16 and
// at least the bytes of the dimensions inside it, the innermost box side is the box's row.
template <int Rank>
inline cudaError_t make_tensor_map(CUtensorMap* out, const void* base, CUtensorMapDataType dtype,
                                   const uint64_t (&sizes)[Rank], const uint64_t (&strideBytes)[Rank > 1 ? Rank - 1 : 1],
                                   const uint32_t (&box)[Rank], CUtensorMapSwizzle swizzle) {
    static_assert(Rank >= 1 && Rank <= 5, "TMA tensor maps have 1 to 5 dimensions");
    const uint64_t es = tensor_map_element_bytes(dtype);
    const unsigned span = tensor_map_swizzle_span(swizzle);
    if (!out || !base || es == 0 || span == ~0u) return cudaErrorInvalidValue;
    if (reinterpret_cast<uintptr_t>(base) % 16 != 0) return cudaErrorInvalidValue;
    // The driver takes dimensions innermost first.
    cuuint64_t dims[Rank], strides[Rank > 1 ? Rank - 1 : 1] = {};
    cuuint32_t boxDims[Rank], elementStrides[Rank];
    uint64_t inner = es;  // bytes spanned by the dimensions inside the current one
    for (int d = 0; d < Rank; ++d) {
        const int i = Rank - 1 - d;  // the d-th innermost dimension
        if (sizes[i] == 0 || sizes[i] > (uint64_t(1) << 32)) return cudaErrorInvalidValue;
        if (box[i] == 0 || box[i] > 256) return cudaErrorInvalidValue;
        if (d > 0) {
            const uint64_t s = strideBytes[i];
            if (s % 16 != 0 || s < inner || s >= (uint64_t(1) << 40)) return cudaErrorInvalidValue;
            strides[d - 1] = s;
            inner = s * sizes[i];
        } else {
            inner = es * sizes[i];
        }
        dims[d] = sizes[i];
        boxDims[d] = box[i];
        elementStrides[d] = 1;
    }
    const uint64_t boxRowBytes = box[Rank - 1] * es;
    if (boxRowBytes % 16 != 0 || (span != 0 && boxRowBytes != span)) return cudaErrorInvalidValue;
    using Encode = PFN_cuTensorMapEncodeTiled_v12000;
    static Encode encode = nullptr;
    if (!encode) {
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
        cudaError_t status = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                                              &found);
#else
        cudaError_t status = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &found);
#endif
        if (status != cudaSuccess || found != cudaDriverEntryPointSuccess || !fn) return cudaErrorNotSupported;
        encode = reinterpret_cast<Encode>(fn);
    }
    CUresult result = encode(out, dtype, Rank, const_cast<void*>(base), dims, strides, boxDims, elementStrides,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return result == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}
// The 2-D map described at the top of this section.
inline cudaError_t make_tensor_map_2d(CUtensorMap* out, const void* base, CUtensorMapDataType dtype, uint64_t rows,
                                      uint64_t cols, uint64_t rowStrideBytes, uint32_t boxRows, uint32_t boxCols,
                                      CUtensorMapSwizzle swizzle) {
    return make_tensor_map<2>(out, base, dtype, {rows, cols}, {rowStrideBytes}, {boxRows, boxCols}, swizzle);
}
} // namespace tl
// tlc:end

// tlc:section wgmma needs=smem_u32
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cstdint>
namespace tl {
// Warpgroup matrix multiply-accumulate (wgmma.mma_async, sm_90a only: compile with
// -arch=sm_90a; elsewhere the helpers trap). A warpgroup is 4 consecutive warps (threads
// 128 * w .. 128 * w + 127); every helper here is called by all 128 threads with the same
// arguments (per-thread fragments excepted).
//
// Sequence: wgmma_fence() (before the first wgmma, and after the threads wrote registers or
// shared memory it reads: for shared memory also fence_proxy_async_shared()), one or more
// wgmma_m64nNk*(...), wgmma_commit_group(), then wgmma_wait_group<0>() before reading the
// accumulators, touching the A registers of an rs form, or overwriting the operand tiles.
//
// Accumulators ("WGMMA register fragments", D of m64nN): thread t of the warpgroup holds
// d[0 .. N/2 - 1]; with w = t / 32, g = (t % 32) / 4, q = t % 4, element d[i] is
// D[16 * w + g + 8 * ((i / 2) % 2)][8 * (i / 4) + 2 * q + i % 2]. A in registers (rs forms,
// 16-bit A of m64k16): a[0..7], a[i] = A[16 * w + g + 8 * ((i / 2) % 2)][2 * q + i % 2 + 8 * (i / 4)].

__device__ __forceinline__ void wgmma_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#else
    __trap();
#endif
}
// Closes the group of wgmma operations issued since the last commit.
__device__ __forceinline__ void wgmma_commit_group() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#else
    __trap();
#endif
}
// Waits until at most N committed groups are pending.
template <int N>
__device__ __forceinline__ void wgmma_wait_group() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
#else
    __trap();
#endif
}

// Keeps the compiler from moving accesses of the R accumulators d[0..R-1] across this point
// (the registers a wgmma writes asynchronously): call it after wgmma_fence() before the first
// wgmma of a group and after wgmma_wait_group before reading d.
template <int R>
__device__ __forceinline__ void wgmma_fence_operand(float* d) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int R>
__device__ __forceinline__ void wgmma_fence_operand(int* d) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

// Shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start
// address >> 4, 16-29 leading-dimension byte offset >> 4, 32-45 stride-dimension byte offset
// >> 4, 49-51 base offset (0 here: swizzled tiles must start on their pattern's repeat, 8 *
// swizzleBytes, apart from the start-address steps inside it that a k-loop makes), 62-63 the
// swizzle (0 none, 1 128B, 2 64B, 3 32B). The offsets, for an operand tile of MN x K elements:
//  * K-major (K contiguous; A as [M][K], B as [N][K]): swizzled, each MN index is a row of
//    swizzleBytes bytes, 8 rows form an atom and strideBytes is the distance between atoms
//    along MN (8 * swizzleBytes when they are packed); leadingBytes is unused (give 16).
//    Unswizzled: "core matrices" of 8 rows x 16 bytes, 128 contiguous bytes each;
//    leadingBytes is the distance between core matrices along K, strideBytes along MN.
//    Stepping k by one instruction's K (32 bytes) moves the start address by 32 bytes inside a
//    swizzled row (or by 2 * leadingBytes unswizzled).
//  * MN-major (MN contiguous; A as [K][M] with trans-a, B as [K][N] with trans-b; 16-bit types
//    only): swizzled, each K index is a row of swizzleBytes bytes of MN, 8 rows form an atom;
//    leadingBytes is the distance between atoms along MN, strideBytes between atoms along K
//    (8 rows of K). Unswizzled: core matrices of 8 K-rows x 16 bytes of MN (128 contiguous
//    bytes); here the roles swap: leadingBytes is the distance between core matrices along K
//    (8 rows), strideBytes along MN (PTX ISA: "Interleave: stride from the first 8 columns to
//    the next 8 columns").
// The swizzle is that of TMA (section tma): the 16-byte chunk bits of the shared address XORed
// with the bits above bit 7, so a tile TMA loaded with the same swizzle reads back right.
__device__ __forceinline__ uint64_t make_smem_desc(const void* smem, int swizzleBytes, unsigned leadingBytes,
                                                   unsigned strideBytes) {
    const uint64_t mode = swizzleBytes == 128 ? 1 : swizzleBytes == 64 ? 2 : swizzleBytes == 32 ? 3 : 0;
    return uint64_t((smem_u32(smem) & 0x3FFFF) >> 4) | uint64_t((leadingBytes & 0x3FFFF) >> 4) << 16 |
           uint64_t((strideBytes & 0x3FFFF) >> 4) << 32 | mode << 62;
}

// The descriptor of the same layout starting `bytes` further (a multiple of 16): the next
// k-step, row block or columns of an operand tile whose descriptor was made at its start.
// Inside a swizzled tile the start may move within a row (a K-major k-step: 32 bytes); the
// swizzle applies to the addresses the hardware computes from it, as for a tile's start.
__device__ __forceinline__ uint64_t wgmma_desc_advance(uint64_t desc, unsigned bytes) {
    return desc + uint64_t(bytes >> 4);
}

// The accumulator operand lists of the inline PTX below ("{%0, ..., %R-1}" and R operands,
// each C(d[i]): "+f" for f32 accumulators, "+r" for s32).
#define TL_WGMMA_F32(x) "+f"(x)
#define TL_WGMMA_S32(x) "+r"(x)
#define TL_WGMMA_LIST_32 "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "  \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
    "}"
#define TL_WGMMA_OPS_32(d, C) \
    C(d[0]), C(d[1]), C(d[2]), C(d[3]), C(d[4]), C(d[5]), C(d[6]), C(d[7]), \
    C(d[8]), C(d[9]), C(d[10]), C(d[11]), C(d[12]), C(d[13]), C(d[14]), C(d[15]), \
    C(d[16]), C(d[17]), C(d[18]), C(d[19]), C(d[20]), C(d[21]), C(d[22]), C(d[23]), \
    C(d[24]), C(d[25]), C(d[26]), C(d[27]), C(d[28]), C(d[29]), C(d[30]), C(d[31])
#define TL_WGMMA_LIST_64 "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "  \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "  \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "  \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
    "}"
#define TL_WGMMA_OPS_64(d, C) TL_WGMMA_OPS_32(d, C), TL_WGMMA_OPS_32((d + 32), C)
#define TL_WGMMA_LIST_128 "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "  \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "  \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "  \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "  \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "  \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "  \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "  \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
    "}"
#define TL_WGMMA_OPS_128(d, C) TL_WGMMA_OPS_64(d, C), TL_WGMMA_OPS_64((d + 64), C)

// D (64 x N, f32) = A (64 x K) * B (K x N) + (scaleD ? D : 0). ss: A and B through shared-memory
// descriptors; TransA / TransB pick the MN-major layouts (16-bit types only). rs: A from
// registers (a[0..7] as above), B through its descriptor. N is 64, 128 or 256; d holds N / 2
// floats. imm-scale-a and imm-scale-b are 1 (no negation).
#define TL_WGMMA_SS(SHAPE, TYPES, R, NA, NB, NS, NTA, NTB)                                                   \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #NS ", 0;\n"                                           \
                 "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPES " " TL_WGMMA_LIST_##R ", %" #NA ", %" #NB \
                 ", p, 1, 1, %" #NTA ", %" #NTB ";\n}\n"                                                      \
                 : TL_WGMMA_OPS_##R(d, TL_WGMMA_F32)                                                                       \
                 : "l"(descA), "l"(descB), "r"(int(scaleD)), "n"(int(TransA)), "n"(int(TransB)))
#define TL_WGMMA_RS(SHAPE, TYPES, R, NA0, NA1, NA2, NA3, NB, NS, NTB)                                          \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #NS ", 0;\n"                                             \
                 "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPES " " TL_WGMMA_LIST_##R ", {%" #NA0 ", %" #NA1 \
                 ", %" #NA2 ", %" #NA3 "}, %" #NB ", p, 1, 1, %" #NTB ";\n}\n"                                  \
                 : TL_WGMMA_OPS_##R(d, TL_WGMMA_F32)                                                                         \
                 : "r"(a01), "r"(a23), "r"(a45), "r"(a67), "l"(descB), "r"(int(scaleD)), "n"(int(TransB)))
#define TL_WGMMA_SS8(SHAPE, TYPES, R, NA, NB, NS)                                                              \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #NS ", 0;\n"                                             \
                 "wgmma.mma_async.sync.aligned." SHAPE ".f32." TYPES " " TL_WGMMA_LIST_##R ", %" #NA ", %" #NB   \
                 ", p, 1, 1;\n}\n"                                                                             \
                 : TL_WGMMA_OPS_##R(d, TL_WGMMA_F32)                                                                         \
                 : "l"(descA), "l"(descB), "r"(int(scaleD)))

// s8 x s8 -> s32: no scale or transpose immediates (integer forms take neither).
#define TL_WGMMA_SS_S8(SHAPE, R, NA, NB, NS)                                                                 \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #NS ", 0;\n"                                           \
                 "wgmma.mma_async.sync.aligned." SHAPE ".s32.s8.s8 " TL_WGMMA_LIST_##R ", %" #NA ", %" #NB      \
                 ", p;\n}\n"                                                                                  \
                 : TL_WGMMA_OPS_##R(d, TL_WGMMA_S32)                                                           \
                 : "l"(descA), "l"(descB), "r"(int(scaleD)))

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TL_WGMMA_BODY_SS(TYPES)                                                                          \
    if constexpr (N == 64) TL_WGMMA_SS("m64n64k16", TYPES, 32, 32, 33, 34, 35, 36);                      \
    else if constexpr (N == 128) TL_WGMMA_SS("m64n128k16", TYPES, 64, 64, 65, 66, 67, 68);               \
    else TL_WGMMA_SS("m64n256k16", TYPES, 128, 128, 129, 130, 131, 132);
#define TL_WGMMA_BODY_RS(TYPES)                                                                          \
    if constexpr (N == 64) TL_WGMMA_RS("m64n64k16", TYPES, 32, 32, 33, 34, 35, 36, 37, 38);              \
    else if constexpr (N == 128) TL_WGMMA_RS("m64n128k16", TYPES, 64, 64, 65, 66, 67, 68, 69, 70);       \
    else TL_WGMMA_RS("m64n256k16", TYPES, 128, 128, 129, 130, 131, 132, 133, 134);
#define TL_WGMMA_BODY_SS8(TYPES)                                                                         \
    if constexpr (N == 64) TL_WGMMA_SS8("m64n64k32", TYPES, 32, 32, 33, 34);                             \
    else if constexpr (N == 128) TL_WGMMA_SS8("m64n128k32", TYPES, 64, 64, 65, 66);                      \
    else TL_WGMMA_SS8("m64n256k32", TYPES, 128, 128, 129, 130);
#define TL_WGMMA_BODY_SS_S8                                                                              \
    if constexpr (N == 64) TL_WGMMA_SS_S8("m64n64k32", 32, 32, 33, 34);                                   \
    else if constexpr (N == 128) TL_WGMMA_SS_S8("m64n128k32", 64, 64, 65, 66);                            \
    else TL_WGMMA_SS_S8("m64n256k32", 128, 128, 129, 130);
#else
#define TL_WGMMA_BODY_SS(TYPES) (void)d, (void)descA, (void)descB, (void)scaleD, __trap();
#define TL_WGMMA_BODY_RS(TYPES) (void)d, (void)a01, (void)a23, (void)a45, (void)a67, (void)descB, (void)scaleD, __trap();
#define TL_WGMMA_BODY_SS8(TYPES) (void)d, (void)descA, (void)descB, (void)scaleD, __trap();
#define TL_WGMMA_BODY_SS_S8 (void)d, (void)descA, (void)descB, (void)scaleD, __trap();
#endif

// Two 16-bit values in one 32-bit register, the first in the low half.
template <typename T>
__device__ __forceinline__ uint32_t wgmma_pack(const T* p) {
    static_assert(sizeof(T) == 2, "16-bit elements");
    unsigned short lo, hi;
    memcpy(&lo, p, 2);
    memcpy(&hi, p + 1, 2);
    return uint32_t(lo) | uint32_t(hi) << 16;
}

template <int N, bool TransA = false, bool TransB = false>
__device__ __forceinline__ void wgmma_m64nNk16_f32_f16_ss(float* d, uint64_t descA, uint64_t descB, bool scaleD) {
    static_assert(N == 64 || N == 128 || N == 256, "wgmma helpers for N = 64, 128, 256");
    TL_WGMMA_BODY_SS("f16.f16")
}
template <int N, bool TransA = false, bool TransB = false>
__device__ __forceinline__ void wgmma_m64nNk16_f32_bf16_ss(float* d, uint64_t descA, uint64_t descB, bool scaleD) {
    static_assert(N == 64 || N == 128 || N == 256, "wgmma helpers for N = 64, 128, 256");
    TL_WGMMA_BODY_SS("bf16.bf16")
}
template <int N, bool TransB = false>
__device__ __forceinline__ void wgmma_m64nNk16_f32_f16_rs(float* d, const __half* a, uint64_t descB, bool scaleD) {
    static_assert(N == 64 || N == 128 || N == 256, "wgmma helpers for N = 64, 128, 256");
    const uint32_t a01 = wgmma_pack(a), a23 = wgmma_pack(a + 2), a45 = wgmma_pack(a + 4), a67 = wgmma_pack(a + 6);
    TL_WGMMA_BODY_RS("f16.f16")
}
template <int N, bool TransB = false>
__device__ __forceinline__ void wgmma_m64nNk16_f32_bf16_rs(float* d, const __nv_bfloat16* a, uint64_t descB,
                                                           bool scaleD) {
    static_assert(N == 64 || N == 128 || N == 256, "wgmma helpers for N = 64, 128, 256");
    const uint32_t a01 = wgmma_pack(a), a23 = wgmma_pack(a + 2), a45 = wgmma_pack(a + 4), a67 = wgmma_pack(a + 6);
    TL_WGMMA_BODY_RS("bf16.bf16")
}
// fp8 (e4m3 x e4m3), K = 32: both operands K-major (no transposed forms for 8-bit types); the
// descriptors' geometry is that of the 16-bit forms (32 bytes of K per instruction).
template <int N>
__device__ __forceinline__ void wgmma_m64nNk32_f32_e4m3_ss(float* d, uint64_t descA, uint64_t descB, bool scaleD) {
    static_assert(N == 64 || N == 128 || N == 256, "wgmma helpers for N = 64, 128, 256");
    TL_WGMMA_BODY_SS8("e4m3.e4m3")
}
// fp8 (e5m2 x e5m2), K = 32: as the e4m3 form.
template <int N>
__device__ __forceinline__ void wgmma_m64nNk32_f32_e5m2_ss(float* d, uint64_t descA, uint64_t descB, bool scaleD) {
    static_assert(N == 64 || N == 128 || N == 256, "wgmma helpers for N = 64, 128, 256");
    TL_WGMMA_BODY_SS8("e5m2.e5m2")
}
// Mixed fp8 (e4m3 x e5m2 and e5m2 x e4m3), K = 32: as the e4m3 form, A's type first.
template <int N>
__device__ __forceinline__ void wgmma_m64nNk32_f32_e4m3_e5m2_ss(float* d, uint64_t descA, uint64_t descB,
                                                                bool scaleD) {
    static_assert(N == 64 || N == 128 || N == 256, "wgmma helpers for N = 64, 128, 256");
    TL_WGMMA_BODY_SS8("e4m3.e5m2")
}
template <int N>
__device__ __forceinline__ void wgmma_m64nNk32_f32_e5m2_e4m3_ss(float* d, uint64_t descA, uint64_t descB,
                                                                bool scaleD) {
    static_assert(N == 64 || N == 128 || N == 256, "wgmma helpers for N = 64, 128, 256");
    TL_WGMMA_BODY_SS8("e5m2.e4m3")
}
// s8 x s8 -> s32, K = 32, both operands K-major; d holds N / 2 ints in the f32 layout.
template <int N>
__device__ __forceinline__ void wgmma_m64nNk32_s32_s8_ss(int* d, uint64_t descA, uint64_t descB, bool scaleD) {
    static_assert(N == 64 || N == 128 || N == 256, "wgmma helpers for N = 64, 128, 256");
    TL_WGMMA_BODY_SS_S8
}
#undef TL_WGMMA_BODY_SS_S8
#undef TL_WGMMA_SS_S8
#undef TL_WGMMA_BODY_SS
#undef TL_WGMMA_BODY_RS
#undef TL_WGMMA_BODY_SS8
#undef TL_WGMMA_SS
#undef TL_WGMMA_RS
#undef TL_WGMMA_SS8
} // namespace tl
// tlc:end

// tlc:section setmaxnreg
namespace tl {
// Raises (inc) or lowers (dec) the register budget of every thread of the warpgroup to N
// (24 <= N <= 256, a multiple of 8), for warp-specialised kernels: producers lower theirs so
// that consumers can raise theirs (sm_90a; all threads of the warpgroup execute it).
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
    static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes 24..256, a multiple of 8");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
#else
    __trap();
#endif
}
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
    static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg takes 24..256, a multiple of 8");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
#else
    __trap();
#endif
}
} // namespace tl
// tlc:end

// tl_cuda_mma.h -- the warp-wide tensor-core helpers of tlc's CUDA output (sm_80 and later):
// ldmatrix loads fragments from shared memory, mma.sync multiplies them. Sections: see
// tl_common.h.
#pragma once

#include "tl_cuda.h"

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

// tl_cuda_wgmma.h -- Hopper's warpgroup helpers for tlc's CUDA output: wgmma (sm_90a) and
// setmaxnreg, which warp-specialised kernels pair with it. Sections: see tl_common.h. Inline PTX
// for the architectures that have the instruction, traps elsewhere. PTX ISA references:
// "Asynchronous Warpgroup Level Matrix Multiply-Accumulate" (wgmma), "setmaxnreg".
#pragma once

#include "tl_cuda.h"

// tlc:section wgmma needs=tl_cuda.h:smem_u32
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
// Nothing between the fence and the last wgmma of the group may write a register a wgmma
// reads: the A registers of the rs forms are packed before the fence (wgmma_pack_operand).
//
// Accumulators ("WGMMA register fragments", D of m64nN, N = 32, 64, 128 or 256): thread t of the warpgroup holds
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
#define TL_WGMMA_LIST_16 "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15" \
    "}"
#define TL_WGMMA_OPS_16(d, C) \
    C(d[0]), C(d[1]), C(d[2]), C(d[3]), C(d[4]), C(d[5]), C(d[6]), C(d[7]), \
    C(d[8]), C(d[9]), C(d[10]), C(d[11]), C(d[12]), C(d[13]), C(d[14]), C(d[15])
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
// registers (a[0..7] as above, packed in pairs: a01..a67), B through its descriptor. N is 32,
// 64, 128 or 256; d holds N / 2 floats. imm-scale-a and imm-scale-b are 1 (no negation).
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
    if constexpr (N == 32) TL_WGMMA_SS("m64n32k16", TYPES, 16, 16, 17, 18, 19, 20);                      \
    else if constexpr (N == 64) TL_WGMMA_SS("m64n64k16", TYPES, 32, 32, 33, 34, 35, 36);                      \
    else if constexpr (N == 128) TL_WGMMA_SS("m64n128k16", TYPES, 64, 64, 65, 66, 67, 68);               \
    else TL_WGMMA_SS("m64n256k16", TYPES, 128, 128, 129, 130, 131, 132);
#define TL_WGMMA_BODY_RS(TYPES)                                                                          \
    if constexpr (N == 32) TL_WGMMA_RS("m64n32k16", TYPES, 16, 16, 17, 18, 19, 20, 21, 22);              \
    else if constexpr (N == 64) TL_WGMMA_RS("m64n64k16", TYPES, 32, 32, 33, 34, 35, 36, 37, 38);              \
    else if constexpr (N == 128) TL_WGMMA_RS("m64n128k16", TYPES, 64, 64, 65, 66, 67, 68, 69, 70);       \
    else TL_WGMMA_RS("m64n256k16", TYPES, 128, 128, 129, 130, 131, 132, 133, 134);
#define TL_WGMMA_BODY_SS8(TYPES)                                                                         \
    if constexpr (N == 32) TL_WGMMA_SS8("m64n32k32", TYPES, 16, 16, 17, 18);                             \
    else if constexpr (N == 64) TL_WGMMA_SS8("m64n64k32", TYPES, 32, 32, 33, 34);                             \
    else if constexpr (N == 128) TL_WGMMA_SS8("m64n128k32", TYPES, 64, 64, 65, 66);                      \
    else TL_WGMMA_SS8("m64n256k32", TYPES, 128, 128, 129, 130);
#define TL_WGMMA_BODY_SS_S8                                                                              \
    if constexpr (N == 32) TL_WGMMA_SS_S8("m64n32k32", 16, 16, 17, 18);                                   \
    else if constexpr (N == 64) TL_WGMMA_SS_S8("m64n64k32", 32, 32, 33, 34);                                   \
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

// The A fragment of an rs form (R / 4 k-steps of 8 16-bit elements) as the instruction reads
// it: R 32-bit registers, pairs packed low half first. Packing is a register move per pair; done
// between wgmma_fence() and a wgmma that reads it, it writes that wgmma's registers after the
// fence, and ptxas then injects warpgroup.arrive before the wgmmas and may serialise them (C7519,
// C7520). So the lowering packs the whole fragment before the fence; the empty asm with "+r"
// keeps each packed register from being recomputed (or the move sunk) past that point.
template <int R, typename T>
__device__ __forceinline__ void wgmma_pack_operand(uint32_t* regs, const T* a) {
#pragma unroll
    for (int i = 0; i < R; ++i) {
        regs[i] = wgmma_pack(a + 2 * i);
        asm volatile("" : "+r"(regs[i])::"memory");
    }
}

template <int N, bool TransA = false, bool TransB = false>
__device__ __forceinline__ void wgmma_m64nNk16_f32_f16_ss(float* d, uint64_t descA, uint64_t descB, bool scaleD) {
    static_assert(N == 32 || N == 64 || N == 128 || N == 256, "wgmma helpers for N = 32, 64, 128, 256");
    TL_WGMMA_BODY_SS("f16.f16")
}
template <int N, bool TransA = false, bool TransB = false>
__device__ __forceinline__ void wgmma_m64nNk16_f32_bf16_ss(float* d, uint64_t descA, uint64_t descB, bool scaleD) {
    static_assert(N == 32 || N == 64 || N == 128 || N == 256, "wgmma helpers for N = 32, 64, 128, 256");
    TL_WGMMA_BODY_SS("bf16.bf16")
}
template <int N, bool TransB = false>
__device__ __forceinline__ void wgmma_m64nNk16_f32_f16_rs(float* d, const uint32_t* a, uint64_t descB, bool scaleD) {
    static_assert(N == 32 || N == 64 || N == 128 || N == 256, "wgmma helpers for N = 32, 64, 128, 256");
    const uint32_t a01 = a[0], a23 = a[1], a45 = a[2], a67 = a[3];
    TL_WGMMA_BODY_RS("f16.f16")
}
template <int N, bool TransB = false>
__device__ __forceinline__ void wgmma_m64nNk16_f32_bf16_rs(float* d, const uint32_t* a, uint64_t descB,
                                                           bool scaleD) {
    static_assert(N == 32 || N == 64 || N == 128 || N == 256, "wgmma helpers for N = 32, 64, 128, 256");
    const uint32_t a01 = a[0], a23 = a[1], a45 = a[2], a67 = a[3];
    TL_WGMMA_BODY_RS("bf16.bf16")
}
// fp8 (e4m3 x e4m3), K = 32: both operands K-major (no transposed forms for 8-bit types); the
// descriptors' geometry is that of the 16-bit forms (32 bytes of K per instruction).
template <int N>
__device__ __forceinline__ void wgmma_m64nNk32_f32_e4m3_ss(float* d, uint64_t descA, uint64_t descB, bool scaleD) {
    static_assert(N == 32 || N == 64 || N == 128 || N == 256, "wgmma helpers for N = 32, 64, 128, 256");
    TL_WGMMA_BODY_SS8("e4m3.e4m3")
}
// fp8 (e5m2 x e5m2), K = 32: as the e4m3 form.
template <int N>
__device__ __forceinline__ void wgmma_m64nNk32_f32_e5m2_ss(float* d, uint64_t descA, uint64_t descB, bool scaleD) {
    static_assert(N == 32 || N == 64 || N == 128 || N == 256, "wgmma helpers for N = 32, 64, 128, 256");
    TL_WGMMA_BODY_SS8("e5m2.e5m2")
}
// Mixed fp8 (e4m3 x e5m2 and e5m2 x e4m3), K = 32: as the e4m3 form, A's type first.
template <int N>
__device__ __forceinline__ void wgmma_m64nNk32_f32_e4m3_e5m2_ss(float* d, uint64_t descA, uint64_t descB,
                                                                bool scaleD) {
    static_assert(N == 32 || N == 64 || N == 128 || N == 256, "wgmma helpers for N = 32, 64, 128, 256");
    TL_WGMMA_BODY_SS8("e4m3.e5m2")
}
template <int N>
__device__ __forceinline__ void wgmma_m64nNk32_f32_e5m2_e4m3_ss(float* d, uint64_t descA, uint64_t descB,
                                                                bool scaleD) {
    static_assert(N == 32 || N == 64 || N == 128 || N == 256, "wgmma helpers for N = 32, 64, 128, 256");
    TL_WGMMA_BODY_SS8("e5m2.e4m3")
}
// s8 x s8 -> s32, K = 32, both operands K-major; d holds N / 2 ints in the f32 layout.
template <int N>
__device__ __forceinline__ void wgmma_m64nNk32_s32_s8_ss(int* d, uint64_t descA, uint64_t descB, bool scaleD) {
    static_assert(N == 32 || N == 64 || N == 128 || N == 256, "wgmma helpers for N = 32, 64, 128, 256");
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

// tl_hip_mfma.h -- the matrix-core helpers of tlc's HIP output (CDNA2 and CDNA3 MFMA builtins,
// one wave-wide 16 x 16 x K multiply each). Sections: see tl_common.h.
#pragma once

#include <hip/hip_runtime.h>

// tlc:section mfma
#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
#include <cstdint>
namespace tl {
// Operand registers of the MFMA builtins, as GCC-style vectors (clang takes them for the
// builtins' ext_vector_type parameters).
typedef _Float16 mfma_f16x4 __attribute__((vector_size(8)));
typedef short mfma_i16x4 __attribute__((vector_size(8)));
typedef float mfma_f32x4 __attribute__((vector_size(16)));
typedef int mfma_i32x4 __attribute__((vector_size(16)));
// A lane's registers from the elements it holds (memcpy: the bytes, whatever the element type).
template <typename V, typename T> __device__ __forceinline__ V mfma_pack(const T* p) {
    V v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}
template <typename T, typename V> __device__ __forceinline__ void mfma_unpack(T* p, const V& v) {
    __builtin_memcpy(p, &v, sizeof v);
}
// One wave-wide 16 x 16 x K MFMA (CDNA2 and CDNA3): D = A (16 x K) B (K x 16) + C. Lane l
// passes its K/4 elements of A (row l % 16, k = K/4 * (l / 16) + i), of B (column l % 16, the
// same k) and its four accumulators (rows 4 * (l / 16) + i of column l % 16).
__device__ __forceinline__ void mfma_f32_16x16x16_f16(float* c, const __half* a, const __half* b) {
    mfma_unpack(c, __builtin_amdgcn_mfma_f32_16x16x16f16(mfma_pack<mfma_f16x4>(a), mfma_pack<mfma_f16x4>(b),
                                                          mfma_pack<mfma_f32x4>(c), 0, 0, 0));
}
// f16 accumulators: the f32 form, rounded to f16 after each instruction (as mma.sync's f16 form).
__device__ __forceinline__ void mfma_f16_16x16x16_f16(__half* c, const __half* a, const __half* b) {
    mfma_f32x4 acc = {__half2float(c[0]), __half2float(c[1]), __half2float(c[2]), __half2float(c[3])};
    acc = __builtin_amdgcn_mfma_f32_16x16x16f16(mfma_pack<mfma_f16x4>(a), mfma_pack<mfma_f16x4>(b), acc, 0, 0, 0);
    for (int i = 0; i < 4; ++i) c[i] = __float2half(acc[i]);
}
// bf16 as raw 16-bit words: CDNA2's _1k form, CDNA3's v_mfma_f32_16x16x16_bf16.
__device__ __forceinline__ void mfma_f32_16x16x16_bf16(float* c, const hip_bfloat16* a, const hip_bfloat16* b) {
    mfma_unpack(c, __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(mfma_pack<mfma_i16x4>(a), mfma_pack<mfma_i16x4>(b),
                                                              mfma_pack<mfma_f32x4>(c), 0, 0, 0));
}
__device__ __forceinline__ void mfma_f32_16x16x4_f32(float* c, const float* a, const float* b) {
    mfma_unpack(c, __builtin_amdgcn_mfma_f32_16x16x4f32(a[0], b[0], mfma_pack<mfma_f32x4>(c), 0, 0, 0));
}
} // namespace tl
// tlc:end

// tlc:section mfma_i8_cdna2 needs=mfma
namespace tl {
// i8, four per 32-bit register (CDNA2, K = 16; CDNA3 dropped this form).
__device__ __forceinline__ void mfma_i32_16x16x16_i8(int* c, const int8_t* a, const int8_t* b) {
    mfma_unpack(c, __builtin_amdgcn_mfma_i32_16x16x16i8(mfma_pack<int>(a), mfma_pack<int>(b),
                                                         mfma_pack<mfma_i32x4>(c), 0, 0, 0));
}
} // namespace tl
// tlc:end

// tlc:section mfma_i8_cdna3 needs=mfma
namespace tl {
// i8, eight per 64-bit register pair (CDNA3, K = 32).
__device__ __forceinline__ void mfma_i32_16x16x32_i8(int* c, const int8_t* a, const int8_t* b) {
    mfma_unpack(c, __builtin_amdgcn_mfma_i32_16x16x32_i8(mfma_pack<long>(a), mfma_pack<long>(b),
                                                          mfma_pack<mfma_i32x4>(c), 0, 0, 0));
}
} // namespace tl
// tlc:end

// tlc:section mfma_fp8 needs=mfma
namespace tl {
// CDNA3's fp8 MFMA reads the FNUZ encodings (exponent bias 8 for e4m3, 16 for e5m2; 0x80 is the
// one NaN, no negative zero, no infinity); tlc's fp8 types are OCP's (bias 7 and 15). The same
// bits read as FNUZ are half the OCP value (subnormals included), so after mapping OCP's NaN
// codes (and e5m2's infinities) to 0x80 and -0 to +0, a product comes out a quarter of the
// exact one: the accumulator goes in scaled by 1/4 and comes out times 4 (exact in f32 away
// from its underflow range). An infinite e5m2 input gives NaN instead of an infinity.
template <bool E5M2> __device__ __forceinline__ long mfma_fnuz_bits(const void* p) {
    unsigned long long x;
    __builtin_memcpy(&x, p, 8);
    const unsigned long long high = 0x8080808080808080ull, low7 = x & ~high;
    // Per byte, bit 7 set: the code is a NaN (e4m3: low bits 0x7f; e5m2: low bits >= 0x7c).
    const unsigned long long nan = (low7 + (E5M2 ? 0x0404040404040404ull : 0x0101010101010101ull)) & high;
    // Per byte, bit 7 set: the low seven bits are zero (+0 or -0).
    const unsigned long long zero = ~(low7 + 0x7f7f7f7f7f7f7f7full) & high;
    x &= ~zero;                                   // -0 -> +0
    x = (x & ~((nan >> 7) * 0xff)) | nan;         // NaN -> 0x80
    return long(x);
}
template <bool AE5M2, bool BE5M2> __device__ __forceinline__ void mfma_fp8(float* c, const void* a, const void* b) {
    mfma_f32x4 acc = mfma_pack<mfma_f32x4>(c) * 0.25f;
    const long av = mfma_fnuz_bits<AE5M2>(a), bv = mfma_fnuz_bits<BE5M2>(b);
    if constexpr (!AE5M2 && !BE5M2) acc = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(av, bv, acc, 0, 0, 0);
    else if constexpr (!AE5M2) acc = __builtin_amdgcn_mfma_f32_16x16x32_fp8_bf8(av, bv, acc, 0, 0, 0);
    else if constexpr (!BE5M2) acc = __builtin_amdgcn_mfma_f32_16x16x32_bf8_fp8(av, bv, acc, 0, 0, 0);
    else acc = __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8(av, bv, acc, 0, 0, 0);
    mfma_unpack(c, acc * 4.0f);
}
// The element types are deduced (tl::fp8_e4m3 and tl::fp8_e5m2, one byte each): this section
// only moves their bits.
template <typename A, typename B> __device__ __forceinline__ void mfma_f32_16x16x32_e4m3(float* c, const A* a, const B* b) {
    static_assert(sizeof(A) == 1 && sizeof(B) == 1, "fp8 operands");
    mfma_fp8<false, false>(c, a, b);
}
template <typename A, typename B> __device__ __forceinline__ void mfma_f32_16x16x32_e5m2(float* c, const A* a, const B* b) {
    static_assert(sizeof(A) == 1 && sizeof(B) == 1, "fp8 operands");
    mfma_fp8<true, true>(c, a, b);
}
template <typename A, typename B>
__device__ __forceinline__ void mfma_f32_16x16x32_e4m3_e5m2(float* c, const A* a, const B* b) {
    static_assert(sizeof(A) == 1 && sizeof(B) == 1, "fp8 operands");
    mfma_fp8<false, true>(c, a, b);
}
template <typename A, typename B>
__device__ __forceinline__ void mfma_f32_16x16x32_e5m2_e4m3(float* c, const A* a, const B* b) {
    static_assert(sizeof(A) == 1 && sizeof(B) == 1, "fp8 operands");
    mfma_fp8<true, false>(c, a, b);
}
} // namespace tl
// tlc:end

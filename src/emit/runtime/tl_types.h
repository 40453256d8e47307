// tl_types.h -- 16-bit and 8-bit floating-point storage types for targets whose toolkit has
// none: all of them on the CPU (tl::half, tl::bfloat16, tl::fp8_e4m3, tl::fp8_e5m2), the fp8
// types on HIP. Each is the raw bits plus explicit conversions to and from float, rounding to
// nearest even; arithmetic is done in float (tlc's output always converts first).
//
// Conversions follow the CUDA toolkit's types: f16 overflows to infinity, bf16 keeps
// infinities, the fp8 types saturate to their largest finite value (e4m3: 448, e5m2: 57344),
// NaN stays NaN. Sections: see tl_common.h.
#pragma once

#include "tl_common.h"

// tlc:section small_float needs=tl_common.h:host_device
#include <cstdint>
#include <cstring>
namespace tl {
namespace detail {
// __builtin_memcpy, not memcpy: HIP declares a device memcpy only in <hip/hip_runtime.h>, which
// a launcher header (that pastes these sections) does not include.
TL_HOST_DEVICE std::uint32_t float_to_bits(float f) {
    std::uint32_t u;
    __builtin_memcpy(&u, &f, sizeof u);
    return u;
}
TL_HOST_DEVICE float bits_to_float(std::uint32_t u) {
    float f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
}
// Encodes f in a binary format with ExpBits exponent bits (bias Bias) and ManBits mantissa
// bits, rounding to nearest even. MaxFinite is the largest finite code without the sign;
// Saturate clamps overflow (and infinities) to it, otherwise overflow gives InfCode. NanCode is
// the code of a quiet NaN.
template <int ManBits, int Bias, std::uint32_t MaxFinite, bool Saturate, std::uint32_t InfCode,
          std::uint32_t NanCode, int TotalBits>
TL_HOST_DEVICE std::uint32_t encode_float(float f) {
    const std::uint32_t u = float_to_bits(f);
    const std::uint32_t sign = (u >> 31) << (TotalBits - 1);
    const std::uint32_t absu = u & 0x7fffffffu;
    if (absu > 0x7f800000u) return sign | NanCode;
    if (absu == 0x7f800000u) return sign | (Saturate ? MaxFinite : InfCode);
    if (absu < 0x00800000u) return sign;  // float subnormals are far below every target's range
    const int exponent = int(absu >> 23) - 127 + Bias;  // biased exponent in the target format
    const std::uint32_t mantissa = (absu & 0x7fffffu) | 0x800000u;
    int shift = 23 - ManBits;
    if (exponent < 1) shift += 1 - exponent;  // a subnormal in the target format
    if (shift > 25) return sign;
    std::uint32_t rounded = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (rounded & 1u))) ++rounded;
    // A carry out of the mantissa moves into the exponent field, as it should.
    std::uint32_t code = exponent < 1 ? rounded : (std::uint32_t(exponent) << ManBits) + rounded - (1u << ManBits);
    if (code > MaxFinite) code = Saturate ? MaxFinite : InfCode;
    return sign | code;
}
// Decodes a code of the format above. HasInf: the all-ones exponent means inf/NaN (IEEE);
// otherwise only the all-ones code is NaN (e4m3's "fn" convention).
template <int ExpBits, int ManBits, int Bias, bool HasInf, int TotalBits>
TL_HOST_DEVICE float decode_float(std::uint32_t code) {
    const std::uint32_t sign = (code >> (TotalBits - 1)) << 31;
    const std::uint32_t exponent = (code >> ManBits) & ((1u << ExpBits) - 1u);
    const std::uint32_t mantissa = code & ((1u << ManBits) - 1u);
    const std::uint32_t maxExponent = (1u << ExpBits) - 1u;
    if (HasInf && exponent == maxExponent)
        return bits_to_float(sign | 0x7f800000u | (mantissa ? 0x400000u : 0u));
    if (!HasInf && exponent == maxExponent && mantissa == (1u << ManBits) - 1u)
        return bits_to_float(sign | 0x7fc00000u);
    if (exponent == 0) {
        // mantissa * 2^(1 - Bias - ManBits)
        const float scale = bits_to_float(std::uint32_t(127 + 1 - Bias - ManBits) << 23);
        const float magnitude = float(mantissa) * scale;
        return bits_to_float(float_to_bits(magnitude) | sign);
    }
    return bits_to_float(sign | ((exponent - Bias + 127) << 23) | (mantissa << (23 - ManBits)));
}
} // namespace detail
} // namespace tl
// tlc:end

// tlc:section half needs=small_float
// Where the compiler targets F16C (x86-64-v3 and later: -march=native on any recent x86), the
// conversions are one instruction each (vcvtps2ph / vcvtph2ps, round to nearest even), and the
// compiler vectorises loops of them; the bits are the software path's, NaN payloads aside.
#if defined(__F16C__) && !defined(__CUDACC__) && !defined(__HIPCC__)
#include <immintrin.h>
#endif
#if defined(__F16C__) && !defined(__CUDACC__) && !defined(__HIPCC__)
#define TL_HALF_F16C 1
#endif
namespace tl {
// IEEE binary16, the layout of CUDA's __half.
struct half {
    std::uint16_t bits;
    half() = default;
#ifdef TL_HALF_F16C
    explicit half(float f) : bits(std::uint16_t(_cvtss_sh(f, 0))) {}
    explicit operator float() const { return _cvtsh_ss(bits); }
#else
    TL_HOST_DEVICE explicit half(float f)
        : bits(std::uint16_t(detail::encode_float<10, 15, 0x7bffu, false, 0x7c00u, 0x7e00u, 16>(f))) {}
    TL_HOST_DEVICE explicit operator float() const { return detail::decode_float<5, 10, 15, true, 16>(bits); }
#endif
};
} // namespace tl
// tlc:end

// tlc:section bfloat16 needs=small_float
namespace tl {
// bfloat16: the upper half of a float, the layout of CUDA's __nv_bfloat16.
struct bfloat16 {
    std::uint16_t bits;
    bfloat16() = default;
    TL_HOST_DEVICE explicit bfloat16(float f) : bits(from_float(f)) {}
    TL_HOST_DEVICE explicit operator float() const { return detail::bits_to_float(std::uint32_t(bits) << 16); }

private:
    TL_HOST_DEVICE static std::uint16_t from_float(float f) {
        const std::uint32_t u = detail::float_to_bits(f);
        if ((u & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((u >> 16) | 0x40u);  // quiet NaN
        return std::uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
};
} // namespace tl
// tlc:end

// tlc:section fp8_e4m3 needs=small_float
namespace tl {
// 8-bit float with 4 exponent and 3 mantissa bits, no infinities (OCP "e4m3fn"), the layout of
// CUDA's __nv_fp8_e4m3.
struct fp8_e4m3 {
    std::uint8_t bits;
    fp8_e4m3() = default;
    TL_HOST_DEVICE explicit fp8_e4m3(float f)
        : bits(std::uint8_t(detail::encode_float<3, 7, 0x7eu, true, 0x7eu, 0x7fu, 8>(f))) {}
    TL_HOST_DEVICE explicit operator float() const { return detail::decode_float<4, 3, 7, false, 8>(bits); }
};
} // namespace tl
// tlc:end

// tlc:section fp8_e5m2 needs=small_float
namespace tl {
// 8-bit float with 5 exponent and 2 mantissa bits (IEEE-like), the layout of CUDA's
// __nv_fp8_e5m2.
struct fp8_e5m2 {
    std::uint8_t bits;
    fp8_e5m2() = default;
    TL_HOST_DEVICE explicit fp8_e5m2(float f)
        : bits(std::uint8_t(detail::encode_float<2, 15, 0x7bu, true, 0x7cu, 0x7eu, 8>(f))) {}
    TL_HOST_DEVICE explicit operator float() const { return detail::decode_float<5, 2, 15, true, 8>(bits); }
};
} // namespace tl
// tlc:end

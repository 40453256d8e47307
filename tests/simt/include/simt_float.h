// Narrow IEEE-style floats for the simulator's __half and __nv_bfloat16.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace simt {

// Encodes f with E exponent and M mantissa bits, rounding to nearest even (via double).
template <int E, int M> unsigned short encode(float f) {
    const int bias = (1 << (E - 1)) - 1;
    unsigned sign = std::signbit(f) ? 1u : 0u;
    double a = std::fabs(double(f));
    unsigned bits;
    if (std::isnan(f)) {
        bits = ((1u << E) - 1) << M | 1u << (M - 1);
    } else if (a == 0) {
        bits = 0;
    } else {
        int e;
        std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
        int exponent = e - 1 + bias;
        if (exponent <= 0) {  // subnormal: units of 2^(1 - bias - M)
            double units = std::nearbyint(std::ldexp(a, bias - 1 + M));
            bits = unsigned(units);
        } else {
            double mant = std::nearbyint(std::ldexp(a, M - (e - 1))) - double(1u << M);
            if (mant >= double(1u << M)) { mant = 0; ++exponent; }
            bits = exponent >= (1 << E) - 1 ? ((1u << E) - 1) << M : unsigned(exponent) << M | unsigned(mant);
        }
    }
    return static_cast<unsigned short>(sign << (E + M) | bits);
}

template <int E, int M> float decode(unsigned short h) {
    const int bias = (1 << (E - 1)) - 1;
    unsigned sign = h >> (E + M) & 1u, exponent = h >> M & ((1u << E) - 1), mant = h & ((1u << M) - 1);
    double v;
    if (exponent == 0) v = std::ldexp(double(mant), 1 - bias - M);
    else if (exponent == (1u << E) - 1) v = mant ? NAN : INFINITY;
    else v = std::ldexp(double(mant | 1u << M), int(exponent) - bias - M);
    return float(sign ? -v : v);
}

} // namespace simt

namespace simt {

// Encodes f as an 8-bit float with E exponent and M mantissa bits (bias 2^(E-1) - 1), rounding
// to nearest even and saturating: overflow and infinities give MaxCode, the largest finite
// code (CUDA's __NV_SATFINITE conversions); NaN gives NanCode. The sign is bit 7.
template <int E, int M, unsigned MaxCode, unsigned NanCode> unsigned char encodeSaturated(float f) {
    const int bias = (1 << (E - 1)) - 1;
    const unsigned sign = std::signbit(f) ? 0x80u : 0u;
    if (std::isnan(f)) return static_cast<unsigned char>(sign | NanCode);
    const double a = std::fabs(double(f));
    unsigned bits;
    if (std::isinf(a)) {
        bits = MaxCode;
    } else if (a == 0) {
        bits = 0;
    } else {
        int e;
        std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
        int exponent = e - 1 + bias;
        if (exponent <= 0) {  // subnormal: units of 2^(1 - bias - M); rounding up may reach the smallest normal
            bits = unsigned(std::nearbyint(std::ldexp(a, bias - 1 + M)));
        } else {
            double mant = std::nearbyint(std::ldexp(a, M - (e - 1))) - double(1u << M);
            if (mant >= double(1u << M)) { mant = 0; ++exponent; }
            bits = unsigned(exponent) << M | unsigned(mant);
        }
        if (bits > MaxCode) bits = MaxCode;
    }
    return static_cast<unsigned char>(sign | bits);
}

// Decodes such a code. HasInf: the all-ones exponent holds infinities and NaNs (IEEE, e5m2);
// otherwise only the all-ones code is NaN (e4m3's "fn" convention).
template <int E, int M, bool HasInf> float decode8(unsigned char code) {
    const int bias = (1 << (E - 1)) - 1;
    const unsigned sign = code >> 7, exponent = code >> M & ((1u << E) - 1), mant = code & ((1u << M) - 1);
    double v;
    if (HasInf && exponent == (1u << E) - 1) v = mant ? NAN : INFINITY;
    else if (!HasInf && exponent == (1u << E) - 1 && mant == (1u << M) - 1) v = NAN;
    else if (exponent == 0) v = std::ldexp(double(mant), 1 - bias - M);
    else v = std::ldexp(double(mant | 1u << M), int(exponent) - bias - M);
    return float(sign ? -v : v);
}

} // namespace simt

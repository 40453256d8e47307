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

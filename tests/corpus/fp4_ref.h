// The value of an fp4 (s1e2m1) nibble as TileLang's dequantisation examples decode it: the
// exponent rebased onto the wider type's (f16: + 14, bf16: + 126) and the one mantissa bit on
// top, so e = 0 is 0.5 rather than a subnormal: (-1)^s * 2^(e - 1) * (1 + m / 2).
#pragma once

#include <cmath>
#include <cstdint>

namespace corpus {

inline double fp4Value(uint8_t nibble) {
    int s = nibble >> 3, e = (nibble & 6) >> 1, m = nibble & 1;
    return (s ? -1.0 : 1.0) * std::ldexp(1.0 + 0.5 * m, e - 1);
}

} // namespace corpus

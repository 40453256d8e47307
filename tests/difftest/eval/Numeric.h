// Scalar values of the reference evaluator and the dtype rules they follow: what a value becomes
// when it is stored into an element of a dtype, and its bits for `reinterpret`. Written here
// from the formats' definitions, not taken from the emitted runtime headers, so that a wrong
// conversion there shows up as a difference.
#pragma once

#include "ast/DType.h"

#include <cstdint>

namespace tlc::eval {

// A scalar: floats in `f` (double), integers and bools in `i` (two's complement bits of the
// dtype's width, sign- or zero-extended to 64). Which one is meaningful follows `t`.
struct Value {
    DType t = DType::I32;
    double f = 0;
    int64_t i = 0;

    static Value ofInt(DType t, int64_t v);    // wrapped to t's width (t an integer type or bool)
    static Value ofFloat(DType t, double v);   // rounded to t (t a float type)
    static Value of(DType t, double v);        // either, from a double (integers truncate)

    double asDouble() const;
    int64_t asInt() const;                     // floats truncate toward zero, as C casts
    bool truth() const { return isFloat(t) ? f != 0 : i != 0; }
};

// Rounds to the nearest value of a float dtype, ties to even: IEEE overflow to infinity for
// f16, bf16 and f32; e4m3 and e5m2 saturate to their largest finite value (448, 57344), as the
// emitted code's conversions do; NaN stays NaN.
double roundToFloat(DType t, double v);
// Wraps to an integer dtype's width (bool: v != 0).
int64_t wrapToInt(DType t, int64_t v);
// A value converted to another dtype, as the language's casts do.
Value convert(const Value& v, DType to);

// The bits of a value in its dtype, and a value of a dtype from bits (`reinterpret`).
uint64_t bitsOf(const Value& v);
Value fromBits(DType t, uint64_t bits);

} // namespace tlc::eval

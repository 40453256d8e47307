#include "Numeric.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace tlc::eval {

namespace {

// A binary float format narrower than f32: mantissa bits, exponent field width and bias, the
// smallest normal exponent, the largest finite value, and how it treats overflow.
struct SmallFloat {
    int mantBits;
    int expBits;
    int bias;
    double maxFinite;
    bool hasInf;     // the all-ones exponent is inf/NaN (IEEE); else only all-ones bits are NaN
    bool saturates;  // overflow gives the largest finite value, not infinity
    int emin() const { return 1 - bias; }
};

const SmallFloat* smallFloat(DType t) {
    static const SmallFloat f16{10, 5, 15, 65504.0, true, false};
    static const SmallFloat bf16{7, 8, 127, std::ldexp(255.0 / 128.0, 127), true, false};
    static const SmallFloat e4m3{3, 4, 7, 448.0, false, true};
    static const SmallFloat e5m2{2, 5, 15, 57344.0, true, true};
    switch (t) {
    case DType::F16: return &f16;
    case DType::BF16: return &bf16;
    case DType::F8E4M3: return &e4m3;
    case DType::F8E5M2: return &e5m2;
    default: return nullptr;
    }
}

double roundSmall(const SmallFloat& fmt, double v) {
    if (std::isnan(v)) return v;
    if (std::isinf(v)) return fmt.saturates ? std::copysign(fmt.maxFinite, v) : v;
    double a = std::fabs(v);
    if (a == 0) return v;
    int e = 0;
    std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
    int exponent = std::max(e - 1, fmt.emin());  // below the normal range: the subnormal spacing
    // Scaling by powers of two is exact; nearbyint rounds half to even in the default mode.
    double r = std::ldexp(std::nearbyint(std::ldexp(a, fmt.mantBits - exponent)), exponent - fmt.mantBits);
    if (r > fmt.maxFinite) r = fmt.saturates ? fmt.maxFinite : std::numeric_limits<double>::infinity();
    return std::copysign(r, v);
}

uint64_t smallBits(const SmallFloat& fmt, double v) {
    uint64_t sign = std::signbit(v) ? uint64_t(1) << (fmt.mantBits + fmt.expBits) : 0;
    uint64_t expAllOnes = (uint64_t(1) << fmt.expBits) - 1;
    if (std::isnan(v)) {
        uint64_t all = (uint64_t(1) << (fmt.mantBits + fmt.expBits)) - 1;
        return fmt.hasInf ? (expAllOnes << fmt.mantBits) | (uint64_t(1) << (fmt.mantBits - 1)) : all;
    }
    // An infinity already in the format keeps its code; anything else is rounded into it first.
    double a = std::isinf(v) && fmt.hasInf ? HUGE_VAL : std::fabs(roundSmall(fmt, v));
    if (std::isinf(a)) return sign | (expAllOnes << fmt.mantBits);
    if (a == 0) return sign;
    int e = 0;
    std::frexp(a, &e);
    int exponent = e - 1;
    if (exponent < fmt.emin())  // subnormal: exponent field 0
        return sign | uint64_t(std::ldexp(a, fmt.mantBits - fmt.emin()));
    uint64_t mant = uint64_t(std::ldexp(a, fmt.mantBits - exponent)) - (uint64_t(1) << fmt.mantBits);
    return sign | (uint64_t(exponent + fmt.bias) << fmt.mantBits) | mant;
}

double smallValue(const SmallFloat& fmt, uint64_t bits) {
    uint64_t mantMask = (uint64_t(1) << fmt.mantBits) - 1;
    uint64_t expAllOnes = (uint64_t(1) << fmt.expBits) - 1;
    uint64_t mant = bits & mantMask;
    uint64_t exp = (bits >> fmt.mantBits) & expAllOnes;
    bool negative = (bits >> (fmt.mantBits + fmt.expBits)) & 1;
    double r;
    if (fmt.hasInf && exp == expAllOnes)
        r = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else if (!fmt.hasInf && exp == expAllOnes && mant == mantMask)
        r = std::numeric_limits<double>::quiet_NaN();
    else if (exp == 0)
        r = std::ldexp(double(mant), fmt.emin() - fmt.mantBits);
    else
        r = std::ldexp(double(mant | (mantMask + 1)), int(exp) - fmt.bias - fmt.mantBits);
    return negative ? -r : r;
}

bool isUnsigned64(DType t) { return t == DType::U64; }

} // namespace

double roundToFloat(DType t, double v) {
    if (const SmallFloat* fmt = smallFloat(t)) return roundSmall(*fmt, v);
    if (t == DType::F32) return double(float(v));
    return v;
}

int64_t wrapToInt(DType t, int64_t v) {
    if (t == DType::Bool) return v != 0;
    int bits = dtypeBits(t);
    if (bits >= 64) return v;
    uint64_t mask = (uint64_t(1) << bits) - 1;
    uint64_t u = uint64_t(v) & mask;
    if (isSigned(t) && (u >> (bits - 1)) & 1) u |= ~mask;
    return int64_t(u);
}

Value Value::ofInt(DType t, int64_t v) {
    Value out;
    out.t = t;
    out.i = wrapToInt(t, v);
    return out;
}

Value Value::ofFloat(DType t, double v) {
    Value out;
    out.t = t;
    out.f = roundToFloat(t, v);
    return out;
}

Value Value::of(DType t, double v) {
    if (isFloat(t)) return ofFloat(t, v);
    if (t == DType::Bool) return ofInt(t, v != 0);
    if (std::isnan(v)) return ofInt(t, 0);
    double tv = std::trunc(v);
    // Out-of-range conversions are undefined in C; clamp so that the evaluator itself is defined.
    if (isUnsigned64(t) && tv >= 9223372036854775808.0) return ofInt(t, int64_t(uint64_t(std::min(tv, 1.8e19))));
    tv = std::max(-9.2e18, std::min(9.2e18, tv));
    return ofInt(t, int64_t(tv));
}

double Value::asDouble() const {
    if (isFloat(t)) return f;
    if (isUnsigned64(t)) return double(uint64_t(i));
    return double(i);
}

int64_t Value::asInt() const {
    if (!isFloat(t)) return i;
    return Value::of(DType::I64, f).i;
}

Value convert(const Value& v, DType to) {
    if (v.t == to) return v;
    if (isFloat(v.t)) return Value::of(to, v.f);
    if (isFloat(to)) return Value::ofFloat(to, v.asDouble());
    return Value::ofInt(to, v.i);
}

uint64_t bitsOf(const Value& v) {
    if (const SmallFloat* fmt = smallFloat(v.t)) return smallBits(*fmt, v.f);
    if (v.t == DType::F32) {
        float f = float(v.f);
        uint32_t u;
        std::memcpy(&u, &f, 4);
        return u;
    }
    if (v.t == DType::F64) {
        uint64_t u;
        std::memcpy(&u, &v.f, 8);
        return u;
    }
    int bits = dtypeBits(v.t);
    return bits >= 64 ? uint64_t(v.i) : uint64_t(v.i) & ((uint64_t(1) << bits) - 1);
}

Value fromBits(DType t, uint64_t bits) {
    Value out;
    out.t = t;
    if (const SmallFloat* fmt = smallFloat(t)) {
        out.f = smallValue(*fmt, bits);
    } else if (t == DType::F32) {
        uint32_t u = uint32_t(bits);
        float f;
        std::memcpy(&f, &u, 4);
        out.f = f;
    } else if (t == DType::F64) {
        std::memcpy(&out.f, &bits, 8);
    } else {
        out.i = wrapToInt(t, int64_t(bits));
    }
    return out;
}

} // namespace tlc::eval

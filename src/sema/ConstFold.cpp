#include "sema/ConstFold.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace tlc::sema {

using ast::BinaryOp;
using ast::UnaryOp;

namespace {

FoldResult value(ConstValue v) { return {std::move(v), std::nullopt}; }
FoldResult divisionByZero() { return {std::nullopt, FoldError{FoldErrorKind::DivisionByZero, {}}}; }
FoldResult overflow(std::string what) { return {std::nullopt, FoldError{FoldErrorKind::Overflow, std::move(what)}}; }
FoldResult noFold() { return {}; }

// An integer result of type `t`, or an overflow error when it does not fit.
FoldResult intResult(__int128 v, DType t) {
    if (t == DType::Bool) return value(v != 0);
    if (v < std::numeric_limits<int64_t>::min() || v > std::numeric_limits<int64_t>::max() ||
        !fitsIn(static_cast<int64_t>(v), t)) {
        // __int128 has no formatter; the value fits in 128 bits, print it by halves if needed.
        std::string text = v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max()
                               ? std::to_string(static_cast<int64_t>(v))
                               : std::string("a value beyond 64 bits");
        return overflow(fmt::format("value {} does not fit in {}", text, dtypeName(t)));
    }
    return value(static_cast<int64_t>(v));
}

int64_t floorDiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

} // namespace

bool fitsIn(int64_t v, DType t) {
    if (t == DType::Bool) return v == 0 || v == 1;
    if (isFloat(t)) return true;
    int bits = dtypeBits(t);
    if (bits >= 64) return isSigned(t) || v >= 0;
    if (isSigned(t)) {
        int64_t lo = -(int64_t(1) << (bits - 1));
        int64_t hi = (int64_t(1) << (bits - 1)) - 1;
        return v >= lo && v <= hi;
    }
    return v >= 0 && v < (int64_t(1) << bits);
}

std::optional<int64_t> asInt(const ConstValue& v) {
    if (auto* i = std::get_if<int64_t>(&v)) return *i;
    if (auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
    return std::nullopt;
}

std::optional<double> asDouble(const ConstValue& v) {
    if (auto* d = std::get_if<double>(&v)) return *d;
    if (auto i = asInt(v)) return static_cast<double>(*i);
    return std::nullopt;
}

FoldResult foldBinary(BinaryOp op, const ConstValue& a, DType aType, const ConstValue& b, DType bType,
                      DType resultType) {
    bool floatOperands = isFloat(aType) || isFloat(bType);
    switch (op) {
    case BinaryOp::And:
    case BinaryOp::Or: {
        auto x = asDouble(a), y = asDouble(b);
        if (!x || !y) return noFold();
        return value(op == BinaryOp::And ? (*x != 0 && *y != 0) : (*x != 0 || *y != 0));
    }
    case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge:
    case BinaryOp::Eq: case BinaryOp::Ne: {
        auto compare = [&](auto x, auto y) {
            if (!x || !y) return noFold();
            switch (op) {
            case BinaryOp::Lt: return value(*x < *y);
            case BinaryOp::Le: return value(*x <= *y);
            case BinaryOp::Gt: return value(*x > *y);
            case BinaryOp::Ge: return value(*x >= *y);
            case BinaryOp::Eq: return value(*x == *y);
            default: return value(*x != *y);
            }
        };
        return floatOperands ? compare(asDouble(a), asDouble(b)) : compare(asInt(a), asInt(b));
    }
    default: break;
    }

    if (isFloat(resultType)) {
        auto x = asDouble(a), y = asDouble(b);
        if (!x || !y) return noFold();
        switch (op) {
        case BinaryOp::Add: return value(*x + *y);
        case BinaryOp::Sub: return value(*x - *y);
        case BinaryOp::Mul: return value(*x * *y);
        case BinaryOp::Div: return value(*x / *y);  // IEEE: x / 0.0 is inf or nan, as at run time
        case BinaryOp::Mod: return value(std::fmod(*x, *y));
        default: return noFold();  // shifts and bit operations are not defined on floats
        }
    }

    auto x = asInt(a), y = asInt(b);
    if (!x || !y) return noFold();
    __int128 l = *x, r = *y;
    switch (op) {
    case BinaryOp::Add: return intResult(l + r, resultType);
    case BinaryOp::Sub: return intResult(l - r, resultType);
    case BinaryOp::Mul: return intResult(l * r, resultType);
    case BinaryOp::Div:
        if (r == 0) return divisionByZero();
        return intResult(l / r, resultType);
    case BinaryOp::Mod:
        if (r == 0) return divisionByZero();
        return intResult(l % r, resultType);
    case BinaryOp::Shl:
    case BinaryOp::Shr: {
        int bits = dtypeBits(resultType);
        if (r < 0 || r >= bits)
            return overflow(fmt::format("shift count {} is out of range for {}", *y, dtypeName(resultType)));
        return intResult(op == BinaryOp::Shl ? l << int(r) : l >> int(r), resultType);
    }
    case BinaryOp::BitAnd: return intResult(l & r, resultType);
    case BinaryOp::BitOr: return intResult(l | r, resultType);
    case BinaryOp::BitXor: return intResult(l ^ r, resultType);
    default: return noFold();
    }
}

FoldResult foldUnary(UnaryOp op, const ConstValue& v, DType resultType) {
    switch (op) {
    case UnaryOp::Not: {
        auto x = asDouble(v);
        if (!x) return noFold();
        return value(*x == 0);
    }
    case UnaryOp::Neg:
        if (isFloat(resultType)) {
            auto x = asDouble(v);
            if (!x) return noFold();
            return value(-*x);
        } else {
            auto x = asInt(v);
            if (!x) return noFold();
            return intResult(-__int128(*x), resultType);
        }
    case UnaryOp::BitNot: {
        auto x = asInt(v);
        if (!x || isFloat(resultType)) return noFold();
        if (resultType == DType::Bool) return value(*x == 0);
        if (!isSigned(resultType)) {
            // ~x within the unsigned width.
            int bits = dtypeBits(resultType);
            uint64_t mask = bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
            return intResult(__int128(~uint64_t(*x) & mask), resultType);
        }
        return intResult(~__int128(*x), resultType);
    }
    }
    return noFold();
}

FoldResult foldIntHelper(Builtin id, const ConstValue& a, const ConstValue& b, DType resultType) {
    if (id == Builtin::Min || id == Builtin::Max) {
        if (isFloat(resultType)) {
            auto x = asDouble(a), y = asDouble(b);
            if (!x || !y) return noFold();
            return value(id == Builtin::Min ? std::min(*x, *y) : std::max(*x, *y));
        }
        auto x = asInt(a), y = asInt(b);
        if (!x || !y) return noFold();
        return intResult(id == Builtin::Min ? std::min(*x, *y) : std::max(*x, *y), resultType);
    }
    auto x = asInt(a), y = asInt(b);
    if (!x || !y || isFloat(resultType)) return noFold();
    if (*y == 0) return divisionByZero();
    if (*y == -1 && *x == std::numeric_limits<int64_t>::min())
        return overflow(fmt::format("value of {}({}, {}) does not fit in 64 bits", builtinInfo(id).name, *x, *y));
    switch (id) {
    case Builtin::Ceildiv: return intResult(-__int128(floorDiv(-*x, *y)), resultType);
    case Builtin::Floordiv: return intResult(floorDiv(*x, *y), resultType);
    case Builtin::Floormod: return intResult(__int128(*x) - __int128(floorDiv(*x, *y)) * *y, resultType);
    default: return noFold();
    }
}

FoldResult foldCast(const ConstValue& v, DType to) {
    if (std::holds_alternative<DType>(v)) return noFold();
    if (to == DType::Bool) return value(*asDouble(v) != 0);
    if (isFloat(to)) return value(*asDouble(v));
    if (auto* d = std::get_if<double>(&v)) {
        if (!std::isfinite(*d) || *d >= 9.3e18 || *d <= -9.3e18)
            return overflow(fmt::format("value {} does not fit in {}", *d, dtypeName(to)));
        return intResult(static_cast<int64_t>(*d), to);
    }
    return intResult(*asInt(v), to);
}

std::optional<ConstValue> parseDefineValue(const std::string& text) {
    if (text == "true") return ConstValue(true);
    if (text == "false") return ConstValue(false);
    if (auto t = parseDType(text)) return ConstValue(*t);
    if (text.empty()) return std::nullopt;
    std::string digits;
    for (char c : text)
        if (c != '_') digits += c;
    size_t start = (digits[0] == '-' || digits[0] == '+') ? 1 : 0;
    bool hex = digits.size() > start + 2 && digits[start] == '0' && (digits[start + 1] == 'x' || digits[start + 1] == 'X');
    errno = 0;
    char* end = nullptr;
    long long i = std::strtoll(digits.c_str(), &end, hex ? 16 : 10);
    if (end && *end == '\0' && end != digits.c_str() + start) {
        if (errno == ERANGE) return std::nullopt;
        return ConstValue(int64_t(i));
    }
    if (hex) return std::nullopt;
    errno = 0;
    double d = std::strtod(digits.c_str(), &end);
    if (end && *end == '\0' && end != digits.c_str() + start && errno != ERANGE) return ConstValue(d);
    return std::nullopt;
}

} // namespace tlc::sema

#include "ast/DType.h"

#include <array>
#include <utility>

namespace tlc {

namespace {
constexpr std::array<DTypeInfo, 17> kInfo = {{
    {"bool", 8, false, false},
    {"i4", 4, false, true},   {"i8", 8, false, true},   {"i16", 16, false, true},
    {"i32", 32, false, true}, {"i64", 64, false, true},
    {"u4", 4, false, false},  {"u8", 8, false, false},  {"u16", 16, false, false},
    {"u32", 32, false, false}, {"u64", 64, false, false},
    {"f16", 16, true, true},  {"bf16", 16, true, true}, {"f32", 32, true, true},
    {"f64", 64, true, true},
    {"f8e4m3", 8, true, true}, {"f8e5m2", 8, true, true},
}};

constexpr std::pair<std::string_view, DType> kAliases[] = {
    {"float16", DType::F16},   {"half", DType::F16},         {"bfloat16", DType::BF16},
    {"float32", DType::F32},   {"float", DType::F32},        {"float64", DType::F64},
    {"double", DType::F64},    {"int4", DType::I4},          {"int8", DType::I8},
    {"int16", DType::I16},     {"int32", DType::I32},        {"int64", DType::I64},
    {"uint4", DType::U4},      {"uint8", DType::U8},         {"uint16", DType::U16},
    {"uint32", DType::U32},    {"uint64", DType::U64},       {"float8_e4m3", DType::F8E4M3},
    {"float8_e5m2", DType::F8E5M2}, {"float8_e4m3fn", DType::F8E4M3}, {"e4m3", DType::F8E4M3},
    {"e5m2", DType::F8E5M2},
};
} // namespace

const DTypeInfo& dtypeInfo(DType t) { return kInfo[static_cast<size_t>(t)]; }

std::optional<DType> parseDType(std::string_view name) {
    for (size_t i = 0; i < kInfo.size(); ++i)
        if (kInfo[i].name == name) return static_cast<DType>(i);
    for (const auto& [alias, t] : kAliases)
        if (alias == name) return t;
    return std::nullopt;
}

DType promote(DType a, DType b) {
    if (a == b) return a;
    if (isFloat(a) != isFloat(b)) return isFloat(a) ? a : b;
    if (isFloat(a)) {
        // Mixed 16-bit floats (f16 with bf16) and 8-bit floats compute in f32.
        if (dtypeBits(a) == dtypeBits(b)) return DType::F32;
        return dtypeBits(a) > dtypeBits(b) ? a : b;
    }
    if (a == DType::Bool) return b;
    if (b == DType::Bool) return a;
    if (dtypeBits(a) != dtypeBits(b)) return dtypeBits(a) > dtypeBits(b) ? a : b;
    return isSigned(a) ? b : a;  // same width: unsigned wins, as in C
}

} // namespace tlc

// Element types of the language, their TileLang aliases and their properties.
#pragma once

#include <optional>
#include <string_view>

namespace tlc {

enum class DType : unsigned char {
    Bool,
    I4, I8, I16, I32, I64,
    U4, U8, U16, U32, U64,
    F16, BF16, F32, F64,
    F8E4M3, F8E5M2,
};

struct DTypeInfo {
    std::string_view name;   // canonical spelling in .tl ("f16")
    int bits;
    bool isFloat;
    bool isSigned;
};

const DTypeInfo& dtypeInfo(DType t);
inline std::string_view dtypeName(DType t) { return dtypeInfo(t).name; }
inline int dtypeBits(DType t) { return dtypeInfo(t).bits; }
// Bytes one element takes when moved on its own (4-bit types move as whole bytes).
inline int dtypeBytes(DType t) { return dtypeBits(t) < 8 ? 1 : dtypeBits(t) / 8; }
inline bool isFloat(DType t) { return dtypeInfo(t).isFloat; }
inline bool isInteger(DType t) { return !dtypeInfo(t).isFloat && t != DType::Bool; }
inline bool isSigned(DType t) { return dtypeInfo(t).isSigned; }

// Accepts canonical names and TileLang aliases ("float16", "int8", "float8_e4m3", ...).
std::optional<DType> parseDType(std::string_view name);

// The type of `a op b` under the usual promotion: floats win, wider wins, signed wins ties.
DType promote(DType a, DType b);

} // namespace tlc

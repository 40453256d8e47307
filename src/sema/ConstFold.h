// Compile-time evaluation of .tl expressions on ConstValues: arithmetic with the language's
// result types, comparisons, the integer helpers and casts. Pure functions, so that the
// checker and the unit tests share them. Failures (division by zero, overflow) come back as
// a FoldError; the caller turns them into diagnostics.
#pragma once

#include "ast/AST.h"
#include "sema/Builtins.h"

#include <optional>
#include <string>
#include <variant>

namespace tlc::sema {

enum class FoldErrorKind { DivisionByZero, Overflow };
struct FoldError {
    FoldErrorKind kind;
    std::string what;  // for Overflow: "value 4294967296 does not fit in i32"
};

// The value, an error, or nothing when the operation does not fold (e.g. a bool shift).
struct FoldResult {
    std::optional<ConstValue> value;
    std::optional<FoldError> error;
};

// Whether an integer fits the range of an integer dtype (bool: 0 or 1).
bool fitsIn(int64_t v, DType t);

// Numeric views of a constant (bool as 0/1). DType constants have none.
std::optional<int64_t> asInt(const ConstValue& v);
std::optional<double> asDouble(const ConstValue& v);

// `a op b` computed in `resultType` (the promoted operand type, or bool for comparisons and
// logic). Integer division and % truncate toward zero, as in C.
FoldResult foldBinary(ast::BinaryOp op, const ConstValue& a, DType aType, const ConstValue& b, DType bType,
                      DType resultType);
FoldResult foldUnary(ast::UnaryOp op, const ConstValue& v, DType resultType);
// ceildiv / floordiv / floormod / min / max on two constants of type `resultType`.
FoldResult foldIntHelper(Builtin id, const ConstValue& a, const ConstValue& b, DType resultType);
// Conversion to a scalar dtype: float -> int truncates, anything -> bool tests != 0.
FoldResult foldCast(const ConstValue& v, DType to);

// Value of a literal-ish C string from -D: "128", "-3", "0x40", "1.5e-3", "true", "bf16".
std::optional<ConstValue> parseDefineValue(const std::string& text);

} // namespace tlc::sema

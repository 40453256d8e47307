// Semantic types of .tl expressions, as computed by sema: scalars, global tensors, on-chip
// buffers and regions of them, shapes and dtypes-as-values.
#pragma once

#include "ast/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tlc {

enum class MemScope { Global, Shared, Fragment, Local };
const char* scopeName(MemScope s);

// A compile-time value.
using ConstValue = std::variant<int64_t, double, bool, DType>;
std::string toString(const ConstValue& v);

// One dimension of a shape: a constant, or a symbolic expression over launch-time sizes
// kept in canonical text form ("M", "ceildiv(N, 128)").
struct Extent {
    std::optional<int64_t> value;
    std::string symbol;  // empty when constant

    static Extent constant(int64_t v) { return Extent{v, {}}; }
    static Extent symbolic(std::string s) { return Extent{std::nullopt, std::move(s)}; }
    bool isConstant() const { return value.has_value(); }
    std::string str() const;
    friend bool operator==(const Extent& a, const Extent& b) {
        return a.value == b.value && a.symbol == b.symbol;
    }
};
using Shape = std::vector<Extent>;
std::string shapeString(const Shape& s);  // "[128, K]"

struct Type {
    enum class Kind {
        Error,    // already diagnosed; suppresses follow-on errors
        Void,
        Scalar,   // a value of `dtype`
        Tensor,   // a whole global tensor or on-chip buffer (`scope`, `dtype`, `shape`)
        Region,   // a rectangular part of a tensor or buffer used as a tile operand
        Shape,    // a list of extents, `[128, 64]`
        DTypeValue,  // `f16` used as a value (alloc dtype, cast)
        String,
    };
    Kind kind = Kind::Error;
    DType dtype = DType::F32;
    MemScope scope = MemScope::Global;
    Shape shape;  // Tensor/Region/Shape
    // Region only: true when every subscript was a point (`A[by * 128, k * 32]`), so that the
    // extents come from the other operand of the tile op (TileLang's rule).
    bool extentsFromOtherOperand = false;

    static Type error() { return {}; }
    static Type voidType() { Type t; t.kind = Kind::Void; return t; }
    static Type scalar(DType d) { Type t; t.kind = Kind::Scalar; t.dtype = d; return t; }
    static Type tensor(MemScope s, DType d, Shape sh) {
        Type t; t.kind = Kind::Tensor; t.scope = s; t.dtype = d; t.shape = std::move(sh); return t;
    }
    static Type region(MemScope s, DType d, Shape sh, bool fromOther) {
        Type t = tensor(s, d, std::move(sh)); t.kind = Kind::Region; t.extentsFromOtherOperand = fromOther;
        return t;
    }
    static Type shapeType(Shape sh) { Type t; t.kind = Kind::Shape; t.shape = std::move(sh); return t; }
    static Type dtypeValue(DType d) { Type t; t.kind = Kind::DTypeValue; t.dtype = d; return t; }
    static Type string() { Type t; t.kind = Kind::String; return t; }

    bool isError() const { return kind == Kind::Error; }
    bool isScalar() const { return kind == Kind::Scalar; }
    bool isTile() const { return kind == Kind::Tensor || kind == Kind::Region; }
    size_t rank() const { return shape.size(); }
    std::string str() const;  // for messages: "f16 shared [128, 32]", "i32", "dtype"
};

} // namespace tlc

#include "ast/Type.h"

#include <fmt/format.h>

namespace tlc {

const char* scopeName(MemScope s) {
    switch (s) {
    case MemScope::Global: return "global";
    case MemScope::Shared: return "shared";
    case MemScope::Fragment: return "fragment";
    case MemScope::Local: return "local";
    }
    return "global";
}

std::string toString(const ConstValue& v) {
    struct Printer {
        std::string operator()(int64_t i) const { return std::to_string(i); }
        std::string operator()(double d) const { return fmt::format("{}", d); }
        std::string operator()(bool b) const { return b ? "true" : "false"; }
        std::string operator()(DType t) const { return std::string(dtypeName(t)); }
    };
    return std::visit(Printer{}, v);
}

std::string Extent::str() const { return value ? std::to_string(*value) : symbol; }

std::string shapeString(const Shape& s) {
    // For messages: a symbolic extent written by a hostile input can be enormous.
    auto clip = [](std::string text) { return text.size() > 48 ? text.substr(0, 45) + "..." : text; };
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + clip(s[i].str());
    return out + "]";
}

std::string Type::str() const {
    switch (kind) {
    case Kind::Error: return "<error>";
    case Kind::Void: return "void";
    case Kind::Scalar: return std::string(dtypeName(dtype));
    case Kind::Tensor:
        return fmt::format("{} {}{}", scopeName(scope), dtypeName(dtype), shapeString(shape));
    case Kind::Region:
        return fmt::format("region of {} {}{}", scopeName(scope), dtypeName(dtype),
                           extentsFromOtherOperand ? "" : shapeString(shape));
    case Kind::Shape: return "shape " + shapeString(shape);
    case Kind::DTypeValue: return "dtype";
    case Kind::String: return "string";
    }
    return "<error>";
}

} // namespace tlc

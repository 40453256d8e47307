#include "compile/EmitKind.h"

#include <array>
#include <utility>

namespace tlc {

namespace {

constexpr std::array<std::pair<std::string_view, EmitKind>, 8> kEmitKinds = {{
    {"ast", EmitKind::Ast},
    {"tile-source", EmitKind::TileSource},
    {"tile-ir", EmitKind::TileIR},
    {"layouts", EmitKind::Layouts},
    {"thread-ir", EmitKind::ThreadIR},
    {"shared", EmitKind::Shared},
    {"source", EmitKind::Source},
    {"python", EmitKind::Python},
}};

} // namespace

const std::vector<std::string>& emitKindNames() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const auto& [name, kind] : kEmitKinds) out.emplace_back(name);
        return out;
    }();
    return names;
}

std::optional<EmitKind> parseEmitKind(std::string_view name) {
    for (const auto& [n, kind] : kEmitKinds)
        if (n == name) return kind;
    return std::nullopt;
}

} // namespace tlc

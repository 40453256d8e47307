// What a run produces (--emit): a stage's dump, or the source (with --emit=python, the source
// plus its pybind11 binding).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tlc {

enum class EmitKind { Ast, TileSource, TileIR, Layouts, ThreadIR, Shared, Source, Python };

// The spellings --emit accepts, in the order --help lists them.
const std::vector<std::string>& emitKindNames();
std::optional<EmitKind> parseEmitKind(std::string_view name);

// Source and Python write the kernel source and its launcher header (-o, --explain, the
// variants, the manifest and depfile apply); the others print a stage.
inline bool emitsSource(EmitKind k) { return k == EmitKind::Source || k == EmitKind::Python; }

} // namespace tlc

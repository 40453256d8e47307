// The layouts an author may give a shared buffer by name (annotate_layout, docs/language.md):
// `row_major`, `col_major`, `padded`, `swizzle_32B` / `_64B` / `_128B`. Sema checks a name
// against the buffer it names, IR building makes the op, layout inference and TMA read the
// swizzle it stands for.
#pragma once

#include "layout/Swizzle.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tlc::layout {

enum class SharedLayoutName { RowMajor, ColMajor, Padded, Swizzle32, Swizzle64, Swizzle128 };

std::optional<SharedLayoutName> parseSharedLayout(std::string_view name);
std::string_view spelling(SharedLayoutName layout);

// What a named layout needs of a [.., cols] buffer of elemBytes-byte elements, in words, or
// nothing when it fits.
std::optional<std::string> sharedLayoutMisfit(SharedLayoutName layout, int64_t cols, int64_t elemBytes);
// The swizzle of a named layout for elemBytes-byte elements (the identity for row_major and
// padded).
layout::Swizzle swizzleOf(SharedLayoutName layout, int64_t elemBytes);

} // namespace tlc::layout

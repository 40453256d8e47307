#pragma once

#include <string_view>

namespace tlc {

// The offset of the first byte that is not part of well-formed UTF-8 (overlong forms and
// surrogates included), or string_view::npos.
size_t firstInvalidUtf8(std::string_view s);

} // namespace tlc

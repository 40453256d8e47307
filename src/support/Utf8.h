#pragma once

#include <string>
#include <string_view>

namespace tlc {

// The offset of the first byte that is not part of well-formed UTF-8 (overlong forms and
// surrogates included), or string_view::npos.
size_t firstInvalidUtf8(std::string_view s);

// `s` cut to at most maxBytes without splitting a character, "..." appended when it was cut
// (diagnostics quote source text this way; a split character would be invalid UTF-8 in them).
std::string clipUtf8(std::string_view s, size_t maxBytes);

} // namespace tlc

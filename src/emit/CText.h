// Text of emitted C: lines wrapped at the output's width, comments and string literals made safe
// for arbitrary text. Shared by the emitters, the launchers and the bindings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tlc::codegen {

constexpr int kLineWidth = 100;

// A long line of C split before binary operators / after commas at the lowest nesting depth,
// continuation lines indented by 8 more spaces; `indent` is the line's own indentation.
std::vector<std::string> wrapStatement(const std::string& text, int indent);

// Comment lines of at most kLineWidth columns: `text`'s words after `first`, then after `next`.
std::vector<std::string> wrapComment(const std::string& first, const std::string& next, const std::string& text);
std::string join(const std::vector<std::string>& items, const std::string& sep);

// A C string literal's contents for arbitrary text ("..." not included).
std::string escapeCString(std::string_view text);
// Text safe in a // comment: one line, no trailing backslash.
std::string commentText(std::string_view text);

} // namespace tlc::codegen

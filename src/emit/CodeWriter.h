// Indented source text: 4 spaces per level, lines added one at a time.
#pragma once

#include <string>
#include <string_view>

namespace tlc::codegen {

class CodeWriter {
public:
    // One line at the current indentation (an empty text gives an empty line).
    void line(std::string_view text) {
        if (!text.empty()) text_.append(size_t(4 * depth_), ' ').append(text);
        text_ += '\n';
    }
    // A line at column 0 (preprocessor directives).
    void directive(std::string_view text) { text_.append(text).append("\n"); }
    // Text as is (already indented, ending in a newline or empty).
    void raw(std::string_view text) { text_.append(text); }
    void blank() {
        if (!text_.empty() && text_.size() >= 2 && text_.substr(text_.size() - 2) != "\n\n") text_ += '\n';
    }
    void indent() { ++depth_; }
    void dedent() { --depth_; }
    int depth() const { return depth_; }
    const std::string& str() const { return text_; }
    std::string take() { return std::move(text_); }

private:
    std::string text_;
    int depth_ = 0;
};

} // namespace tlc::codegen

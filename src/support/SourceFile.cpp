#include "support/SourceFile.h"

#include <algorithm>

namespace tlc {

SourceRange SourceRange::join(const SourceRange& a, const SourceRange& b) {
    if (!a.valid()) return b;
    if (!b.valid()) return a;
    return {std::min(a.begin, b.begin), std::max(a.end, b.end)};
}

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
    lineStarts_.push_back(0);
    for (size_t i = 0; i < text_.size(); ++i)
        if (text_[i] == '\n') lineStarts_.push_back(i + 1);
}

std::string_view SourceFile::line(uint32_t line) const {
    if (line == 0 || line > lineStarts_.size()) return {};
    size_t begin = lineStarts_[line - 1];
    size_t end = line < lineStarts_.size() ? lineStarts_[line] - 1 : text_.size();
    std::string_view view(text_.data() + begin, end - begin);
    if (!view.empty() && view.back() == '\r') view.remove_suffix(1);
    return view;
}

} // namespace tlc

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

namespace {

// The byte offset of 1-based code-point column `col` in `line` (its end when past it).
size_t byteOfColumn(std::string_view line, uint32_t col) {
    size_t at = 0;
    for (uint32_t c = 1; c < col && at < line.size(); ++c) {
        ++at;
        while (at < line.size() && (static_cast<unsigned char>(line[at]) & 0xC0) == 0x80) ++at;
    }
    return at;
}

} // namespace

std::string SourceFile::text(SourceRange range) const {
    if (!range.valid() || range.end < range.begin) return {};
    std::string out;
    for (uint32_t l = range.begin.line; l <= range.end.line; ++l) {
        std::string_view t = line(l);
        size_t from = l == range.begin.line ? byteOfColumn(t, range.begin.col) : 0;
        size_t to = l == range.end.line ? byteOfColumn(t, range.end.col + 1) : t.size();
        if (from > to) continue;
        std::string piece(t.substr(from, to - from));
        size_t first = piece.find_first_not_of(" \t"), last = piece.find_last_not_of(" \t");
        if (first == std::string::npos) continue;
        out += (out.empty() ? "" : " ") + piece.substr(first, last - first + 1);
    }
    return out;
}

} // namespace tlc

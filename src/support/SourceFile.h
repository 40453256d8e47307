// A source buffer with its name and a line table, so that diagnostics can quote lines.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tlc {

// 1-based line and column. Columns count characters (Unicode code points: what ANTLR counts,
// and what puts a caret under the right character); a tab is one column. On a line that is not
// valid UTF-8 (only reachable for err_invalid_utf8), columns count bytes. line == 0 means
// "no location".
struct SourceLoc {
    uint32_t line = 0;
    uint32_t col = 0;
    bool valid() const { return line != 0; }
    friend bool operator==(const SourceLoc&, const SourceLoc&) = default;
    friend auto operator<=>(const SourceLoc&, const SourceLoc&) = default;
};

// A range of source text; `end` is the last character covered (inclusive).
struct SourceRange {
    SourceLoc begin;
    SourceLoc end;
    SourceRange() = default;
    SourceRange(SourceLoc b, SourceLoc e) : begin(b), end(e) {}
    explicit SourceRange(SourceLoc at) : begin(at), end(at) {}
    bool valid() const { return begin.valid(); }
    // The smallest range covering both.
    static SourceRange join(const SourceRange& a, const SourceRange& b);
};

class SourceFile {
public:
    SourceFile(std::string name, std::string text);

    const std::string& name() const { return name_; }
    const std::string& text() const { return text_; }
    size_t lineCount() const { return lineStarts_.size(); }
    // The text of a 1-based line, without its line terminator.
    std::string_view line(uint32_t line) const;
    // The text a range covers, its lines joined by one space each (for messages and comments
    // that quote the source: a `require` condition as written).
    std::string text(SourceRange range) const;

private:
    std::string name_;
    std::string text_;
    std::vector<size_t> lineStarts_;
};

} // namespace tlc

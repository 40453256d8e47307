#include "support/Diagnostics.h"

#include "support/Utf8.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>

namespace tlc {

namespace {
const DiagInfo kDiagTable[] = {
#define DIAG(id, severity, format) {#id, Severity::severity, format},
#include "support/Diagnostics.def"
#undef DIAG
};
static_assert(sizeof(kDiagTable) / sizeof(kDiagTable[0]) == size_t(DiagId::Count));

// Columns count code points (see SourceFile.h); on a line that is not valid UTF-8 every byte
// counts as one. The byte offset where code point `n` (0-based) of `line` starts.
size_t byteOfColumn(std::string_view line, size_t n, bool validUtf8) {
    if (!validUtf8) return std::min(n, line.size());
    size_t i = 0;
    for (; n > 0 && i < line.size(); --n) {
        ++i;  // the lead byte
        while (i < line.size() && (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) ++i;  // continuations
    }
    return i;
}

size_t columnCount(std::string_view line, bool validUtf8) {
    if (!validUtf8) return line.size();
    size_t n = 0;
    for (char c : line) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

void printOne(std::ostream& os, const SourceFile& file, const Diagnostic& d, bool color) {
    const char* bold = color ? "\033[1m" : "";
    const char* reset = color ? "\033[0m" : "";
    const char* sevColor = "";
    if (color)
        sevColor = d.severity == Severity::Error     ? "\033[1;31m"
                   : d.severity == Severity::Warning ? "\033[1;35m"
                                                     : "\033[1;36m";
    os << bold << (d.commandLine ? std::string("tlc") : file.name());
    if (d.range.valid()) os << ':' << d.range.begin.line << ':' << d.range.begin.col;
    os << ": " << reset << sevColor << severityName(d.severity) << ": " << reset << bold << d.message;
    // The flag that controls it, as clang prints it (notes of a warning have none).
    if (std::string w = warningName(d.id); !w.empty() && d.severity != Severity::Note)
        os << (d.severity == Severity::Error ? " [-Werror,-W" : " [-W") << w << ']';
    os << reset << '\n';
    if (!d.range.valid()) return;
    std::string_view line = file.line(d.range.begin.line);
    bool validUtf8 = firstInvalidUtf8(line) == std::string_view::npos;
    // Very long lines (minified or hostile input) are clipped to 160 columns around the caret.
    size_t columns = columnCount(line, validUtf8);
    uint32_t col = d.range.begin.col;
    size_t firstColumn = 0;  // 0-based column where the printed text starts
    size_t shownColumns = columns;
    if (columns > 200) {
        firstColumn = col > 100 ? col - 80 : 0;
        shownColumns = std::min<size_t>(160, columns - std::min(columns, firstColumn));
    }
    size_t beginByte = byteOfColumn(line, firstColumn, validUtf8);
    size_t endByte = byteOfColumn(line, firstColumn + shownColumns, validUtf8);
    std::string_view shown = line.substr(beginByte, endByte - beginByte);
    // One character per column: control characters and bytes of broken UTF-8 would garble the
    // terminal and are shown as '?', tabs as a space.
    std::string text;
    text.reserve(shown.size());
    for (char c : shown) {
        unsigned char u = static_cast<unsigned char>(c);
        text += c == '\t' ? ' ' : (u < 0x20 || u == 0x7f || (u >= 0x80 && !validUtf8)) ? '?' : c;
    }
    os << text << '\n';
    uint32_t caretCol = col > firstColumn ? col - static_cast<uint32_t>(firstColumn) : 1;
    uint32_t endCol = d.range.end.line == d.range.begin.line && d.range.end.col >= col
                          ? d.range.end.col - static_cast<uint32_t>(firstColumn)
                          : caretCol;
    endCol = std::min<uint32_t>(endCol, static_cast<uint32_t>(shownColumns) + 1);
    std::string marker(caretCol > 0 ? caretCol - 1 : 0, ' ');
    marker += '^';
    for (uint32_t c = caretCol + 1; c <= endCol; ++c) marker += '~';
    os << (color ? "\033[1;32m" : "") << marker << reset << '\n';
}

nlohmann::json toJsonValue(const SourceFile& file, const Diagnostic& d) {
    nlohmann::json j;
    j["id"] = diagInfo(d.id).name;
    j["severity"] = severityName(d.severity);
    j["message"] = d.message;
    if (std::string w = warningName(d.id); !w.empty() && d.severity != Severity::Note) j["option"] = "-W" + w;
    j["file"] = file.name();
    if (d.range.valid()) {
        j["line"] = d.range.begin.line;
        j["column"] = d.range.begin.col;
        j["end_line"] = d.range.end.line;
        j["end_column"] = d.range.end.col;
    }
    if (!d.notes.empty()) {
        j["notes"] = nlohmann::json::array();
        for (const auto& n : d.notes) j["notes"].push_back(toJsonValue(file, n));
    }
    return j;
}
} // namespace

const DiagInfo& diagInfo(DiagId id) { return kDiagTable[static_cast<size_t>(id)]; }

const char* severityName(Severity s) {
    switch (s) {
    case Severity::Note: return "note";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
    }
    return "error";
}

std::string warningName(DiagId id) {
    const DiagInfo& info = diagInfo(id);
    if (info.severity != Severity::Warning) return "";
    std::string name = info.name;
    if (name.rfind("warn_", 0) == 0) name = name.substr(5);
    std::replace(name.begin(), name.end(), '_', '-');
    return name;
}

std::string_view warningFlagName(std::string_view flag) {
    std::string_view name = flag.rfind("-W", 0) == 0 ? flag.substr(2) : std::string_view();
    for (std::string_view prefix : {"no-", "error="})
        if (name.rfind(prefix, 0) == 0) name.remove_prefix(prefix.size());
    return name;
}

bool DiagnosticEngine::applyWarningFlag(std::string_view flag) {
    if (flag == "-w") {
        noWarnings_ = true;
        return true;
    }
    if (flag.rfind("-W", 0) != 0) return false;
    const bool on = flag.rfind("-Wno-", 0) != 0;                     // -Wno-x, -Wno-error=x: off
    const bool error = flag.substr(on ? 2 : 5).rfind("error=", 0) == 0;  // -Werror=x, -Wno-error=x
    const std::string_view name = warningFlagName(flag);
    for (int i = 0; i < int(DiagId::Count); ++i) {
        if (warningName(DiagId(i)) != name) continue;
        if (error) {
            asError_[i] = on;
            if (on) disabled_.erase(i);  // clang: -Werror=x also turns x on
        } else if (on) {
            disabled_.erase(i);
        } else {
            disabled_.insert(i);
        }
        return true;
    }
    return false;
}

Diagnostic& DiagnosticEngine::add(DiagId id, SourceRange range, std::string message) {
    Severity severity = diagInfo(id).severity;
    if (severity == Severity::Warning && (noWarnings_ || disabled_.count(int(id)))) {
        lastDropped_ = true;  // its notes go with it
        discarded_ = {};
        return discarded_;
    }
    if (severity == Severity::Warning) {
        auto it = asError_.find(int(id));
        if (it != asError_.end() ? it->second : werror_) severity = Severity::Error;
    }
    if (severity == Severity::Error && errorLimitReached()) {
        if (!limitReported_) {
            limitReported_ = true;
            diags_.push_back({DiagId::err_too_many_errors, Severity::Error, range,
                              diagInfo(DiagId::err_too_many_errors).format, {}});
        }
        discarded_ = {};
        return discarded_;
    }
    lastDropped_ = mergeRepeats_ &&
                   !seen_.insert(fmt::format("{}:{}:{}:{}:{}:{}", int(id), range.begin.line, range.begin.col,
                                             range.end.line, range.end.col, message))
                        .second;
    if (lastDropped_) {
        discarded_ = {};
        return discarded_;
    }
    if (severity == Severity::Error) ++errorCount_;
    if (severity == Severity::Warning) ++warningCount_;
    diags_.push_back({id, severity, range, std::move(message), {}});
    return diags_.back();
}

void DiagnosticEngine::note(SourceRange range, std::string message) {
    if (diags_.empty() || limitReported_ || lastDropped_) return;
    const bool commandLine = diags_.back().commandLine && !range.valid();
    diags_.back().notes.push_back({diags_.back().id, Severity::Note, range, std::move(message), {}, commandLine});
}

void DiagnosticEngine::printText(std::ostream& os, bool color) const {
    for (const auto& d : diags_) {
        printOne(os, file_, d, color);
        for (const auto& n : d.notes) printOne(os, file_, n, color);
    }
    if (errorCount_ > 0 || warningCount_ > 0) {
        auto plural = [](unsigned n, const char* what) {
            return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
        };
        if (warningCount_ > 0 && errorCount_ > 0)
            os << plural(warningCount_, "warning") << " and " << plural(errorCount_, "error") << " generated.\n";
        else if (errorCount_ > 0)
            os << plural(errorCount_, "error") << " generated.\n";
        else
            os << plural(warningCount_, "warning") << " generated.\n";
    }
}

std::string DiagnosticEngine::toJson() const {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& d : diags_) out.push_back(toJsonValue(file_, d));
    // Messages quote source text, which the parser checked is UTF-8; should a bug still put a
    // broken character in one, it prints as U+FFFD rather than throwing.
    return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

void DiagnosticEngine::printJson(std::ostream& os) const { os << toJson() << '\n'; }

} // namespace tlc

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

void printOne(std::ostream& os, const SourceFile& file, const Diagnostic& d, bool color) {
    const char* bold = color ? "\033[1m" : "";
    const char* reset = color ? "\033[0m" : "";
    const char* sevColor = "";
    if (color)
        sevColor = d.severity == Severity::Error     ? "\033[1;31m"
                   : d.severity == Severity::Warning ? "\033[1;35m"
                                                     : "\033[1;36m";
    os << bold << file.name();
    if (d.range.valid()) os << ':' << d.range.begin.line << ':' << d.range.begin.col;
    os << ": " << reset << sevColor << severityName(d.severity) << ": " << reset << bold
       << d.message << reset << '\n';
    if (!d.range.valid()) return;
    std::string_view line = file.line(d.range.begin.line);
    // Very long lines (minified or hostile input) are clipped around the caret.
    size_t begin = 0;
    uint32_t col = d.range.begin.col;
    if (line.size() > 200 && col > 100) {
        begin = col - 80;
        line = line.substr(begin, 160);
    } else if (line.size() > 200) {
        line = line.substr(0, 160);
    }
    std::string text;
    // Control characters and bytes of broken UTF-8 would garble the terminal: show '?'.
    bool validUtf8 = firstInvalidUtf8(line) == std::string_view::npos;
    for (char c : line) {
        unsigned char u = static_cast<unsigned char>(c);
        text += c == '\t' ? ' ' : (u < 0x20 || u == 0x7f || (u >= 0x80 && !validUtf8)) ? '?' : c;
    }
    os << text << '\n';
    uint32_t caretCol = col - static_cast<uint32_t>(begin);
    uint32_t endCol = d.range.end.line == d.range.begin.line && d.range.end.col >= col
                          ? d.range.end.col - static_cast<uint32_t>(begin)
                          : caretCol;
    endCol = std::min<uint32_t>(endCol, static_cast<uint32_t>(text.size()) + 1);
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

Diagnostic& DiagnosticEngine::add(DiagId id, SourceRange range, std::string message) {
    Severity severity = diagInfo(id).severity;
    if (severity == Severity::Warning && werror_) severity = Severity::Error;
    if (severity == Severity::Error && errorLimitReached()) {
        if (!limitReported_) {
            limitReported_ = true;
            diags_.push_back({DiagId::err_too_many_errors, Severity::Error, range,
                              diagInfo(DiagId::err_too_many_errors).format, {}});
        }
        discarded_ = {};
        return discarded_;
    }
    if (severity == Severity::Error) ++errorCount_;
    if (severity == Severity::Warning) ++warningCount_;
    diags_.push_back({id, severity, range, std::move(message), {}});
    return diags_.back();
}

void DiagnosticEngine::note(SourceRange range, std::string message) {
    if (diags_.empty() || limitReported_) return;
    diags_.back().notes.push_back({diags_.back().id, Severity::Note, range, std::move(message), {}});
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
    return out.dump(2);
}

void DiagnosticEngine::printJson(std::ostream& os) const { os << toJson() << '\n'; }

} // namespace tlc

#include "support/Verify.h"

#include <fmt/format.h>

#include <ostream>
#include <regex>
#include <string>
#include <vector>

namespace tlc {

namespace {

struct Expectation {
    Severity severity;
    uint32_t line;         // the line the diagnostic must be on
    uint32_t writtenAt;    // where the comment is
    std::string text;
    bool matched = false;
};

std::vector<Expectation> collectExpectations(const SourceFile& file, std::ostream& out, bool& ok) {
    static const std::regex kPattern(R"(expected-(error|warning|note)(@([+-]?)(\d+))?\s*\{\{(.*?)\}\})");
    std::vector<Expectation> result;
    for (uint32_t line = 1; line <= file.lineCount(); ++line) {
        std::string text(file.line(line));
        for (auto it = std::sregex_iterator(text.begin(), text.end(), kPattern); it != std::sregex_iterator(); ++it) {
            const auto& m = *it;
            Severity sev = m[1] == "error" ? Severity::Error : m[1] == "warning" ? Severity::Warning : Severity::Note;
            int64_t target = line;
            if (m[2].matched) {
                int64_t n = std::stoll(m[4]);
                target = m[3] == "+" ? line + n : m[3] == "-" ? line - n : n;
            }
            if (target < 1 || target > int64_t(file.lineCount())) {
                out << fmt::format("{}:{}: expectation refers to line {}, outside the file\n", file.name(), line, target);
                ok = false;
                continue;
            }
            result.push_back({sev, uint32_t(target), line, m[5], false});
        }
    }
    return result;
}

bool matchOne(std::vector<Expectation>& expected, const Diagnostic& d) {
    for (auto& e : expected) {
        if (!e.matched && e.severity == d.severity && e.line == d.range.begin.line &&
            d.message.find(e.text) != std::string::npos) {
            e.matched = true;
            return true;
        }
    }
    return false;
}

} // namespace

bool verifyDiagnostics(const DiagnosticEngine& diags, std::ostream& out) {
    const SourceFile& file = diags.file();
    bool ok = true;
    std::vector<Expectation> expected = collectExpectations(file, out, ok);
    auto unexpected = [&](const Diagnostic& d) {
        out << fmt::format("{}:{}:{}: unexpected {}: {}\n", file.name(), d.range.begin.line, d.range.begin.col,
                           severityName(d.severity), d.message);
        ok = false;
    };
    for (const auto& d : diags.diagnostics()) {
        if (!matchOne(expected, d)) unexpected(d);
        for (const auto& n : d.notes)
            if (!matchOne(expected, n)) unexpected(n);
    }
    for (const auto& e : expected) {
        if (e.matched) continue;
        out << fmt::format("{}:{}: expected {} on line {} was not reported: {{{{{}}}}}\n", file.name(), e.writtenAt,
                           severityName(e.severity), e.line, e.text);
        ok = false;
    }
    return ok;
}

} // namespace tlc

#include "support/Verify.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <ostream>
#include <cctype>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

namespace tlc {

namespace {

struct Expectation {
    Severity severity;
    uint32_t line;         // the line the diagnostic must be on (0: none, `@*`)
    uint32_t writtenAt;    // where the comment is
    std::string text;
    bool matched = false;
};

// One `expected-KIND[@[+-]N | @*] {{TEXT}}` in a line, found by hand rather than with std::regex:
// libstdc++'s regex recurses once per character, and a long line overflowed the stack. `@*` is a
// diagnostic with no place in the file (about the command line: -D).
struct Found {
    Severity severity;
    bool nowhere = false;  // @*
    bool hasLine = false;
    char sign = 0;       // '+', '-' or 0 (absolute)
    std::string_view digits;
    std::string_view text;
};

// Finds the next expectation in `line` at or after `pos`; advances `pos` past it.
std::optional<Found> nextExpectation(std::string_view line, size_t& pos) {
    static constexpr std::string_view kPrefix = "expected-";
    while (true) {
        size_t at = line.find(kPrefix, pos);
        if (at == std::string_view::npos) {
            pos = line.size();
            return std::nullopt;
        }
        size_t i = at + kPrefix.size();
        pos = i;  // whatever happens, the next search starts after this "expected-"
        Found f;
        if (line.substr(i, 5) == "error") f.severity = Severity::Error, i += 5;
        else if (line.substr(i, 7) == "warning") f.severity = Severity::Warning, i += 7;
        else if (line.substr(i, 4) == "note") f.severity = Severity::Note, i += 4;
        else continue;
        if (i + 1 < line.size() && line[i] == '@' && line[i + 1] == '*') {
            f.nowhere = true;
            i += 2;
        } else if (i < line.size() && line[i] == '@') {
            ++i;
            if (i < line.size() && (line[i] == '+' || line[i] == '-')) f.sign = line[i++];
            size_t digitsBegin = i;
            while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
            if (i == digitsBegin) continue;
            f.hasLine = true;
            f.digits = line.substr(digitsBegin, i - digitsBegin);
        }
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        if (line.substr(i, 2) != "{{") continue;
        size_t close = line.find("}}", i + 2);
        if (close == std::string_view::npos) continue;
        f.text = line.substr(i + 2, close - (i + 2));
        pos = close + 2;
        return f;
    }
}

std::vector<Expectation> collectExpectations(const SourceFile& file, std::ostream& out, bool& ok) {
    std::vector<Expectation> result;
    const int64_t lines = int64_t(file.lineCount());
    for (uint32_t line = 1; line <= file.lineCount(); ++line) {
        std::string_view text = file.line(line);
        size_t pos = 0;
        while (std::optional<Found> f = nextExpectation(text, pos)) {
            if (f->nowhere) {
                result.push_back({f->severity, 0, line, std::string(f->text), false});
                continue;
            }
            int64_t target = line;
            if (f->hasLine) {
                // Numbers too large for int64 are outside the file like any other (found by
                // fuzzing: std::stoll threw).
                int64_t n = 0;
                auto [end, ec] = std::from_chars(f->digits.data(), f->digits.data() + f->digits.size(), n);
                if (ec != std::errc() || n > lines + line) n = lines + line + 1;
                target = f->sign == '+' ? line + n : f->sign == '-' ? line - n : n;
            }
            if (target < 1 || target > lines) {
                std::string spelled = f->hasLine ? std::string(f->sign ? 1 : 0, f->sign) + std::string(f->digits) : "";
                if (spelled.size() > 24) spelled = spelled.substr(0, 24) + "...";
                out << fmt::format("{}:{}: expectation refers to line @{}, outside the file\n", file.name(), line,
                                   spelled);
                ok = false;
                continue;
            }
            result.push_back({f->severity, uint32_t(target), line, std::string(f->text), false});
        }
    }
    return result;
}

bool matchOne(std::vector<Expectation>& expected, const Diagnostic& d) {
    for (auto& e : expected) {
        uint32_t line = d.range.valid() ? d.range.begin.line : 0;
        if (!e.matched && e.severity == d.severity && e.line == line &&
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

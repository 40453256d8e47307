// The diagnostics engine: text and JSON output, -Werror, the error limit, notes, and the
// clang-style --verify matcher.
#include "support/Diagnostics.h"
#include "support/SourceFile.h"
#include "support/Verify.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <sstream>
#include <string>

using namespace tlc;

namespace {

std::string text(const DiagnosticEngine& d, bool color = false) {
    std::ostringstream os;
    d.printText(os, color);
    return os.str();
}

SourceRange range(uint32_t line, uint32_t col, uint32_t endLine, uint32_t endCol) {
    return {SourceLoc{line, col}, SourceLoc{endLine, endCol}};
}

// Ids by severity, found in the table so that the tests do not depend on the sema section.
std::optional<DiagId> firstWith(Severity s) {
    for (int i = 0; i < int(DiagId::Count); ++i)
        if (diagInfo(DiagId(i)).severity == s) return DiagId(i);
    return std::nullopt;
}

// Reports a table diagnostic whatever its format's arguments are.
Diagnostic& reportAny(DiagnosticEngine& d, DiagId id, SourceRange r) {
    return d.report(id, r, "a", "b", "c", "d", "e", "f", "g", "h");
}

const char* kSource = "kernel k() {\n"
                      "  let x = 123456789012345678901234;\n"
                      "}\n";

} // namespace

TEST_CASE("diagnostics: the table is consistent") {
    REQUIRE(int(DiagId::Count) > 0);
    std::set<std::string> names;
    for (int i = 0; i < int(DiagId::Count); ++i) {
        const DiagInfo& info = diagInfo(DiagId(i));
        CAPTURE(info.name);
        CHECK(names.insert(info.name).second);
        std::string name = info.name;
        // Ids say what they are: err_*, warn_*, note_*.
        if (info.severity == Severity::Error) CHECK(name.rfind("err_", 0) == 0);
        if (info.severity == Severity::Warning) CHECK(name.rfind("warn_", 0) == 0);
        CHECK(std::string(info.format).size() > 0);
        // Every format can be filled with string arguments (a bad format would throw here).
        CHECK_NOTHROW((void)fmt::format(fmt::runtime(info.format), "a", "b", "c", "d", "e", "f", "g", "h"));
    }
    CHECK(std::string(diagInfo(DiagId::err_unexpected_token).name) == "err_unexpected_token");
    CHECK(std::string(severityName(Severity::Error)) == "error");
    CHECK(std::string(severityName(Severity::Warning)) == "warning");
    CHECK(std::string(severityName(Severity::Note)) == "note");
}

TEST_CASE("diagnostics: text format quotes the line and underlines the range") {
    SourceFile f("t.tl", kSource);
    DiagnosticEngine d(f);
    d.report(DiagId::err_integer_literal_too_large, range(2, 11, 2, 34), "123456789012345678901234");
    CHECK(d.hasErrors());
    CHECK(d.errorCount() == 1);
    CHECK(text(d) == "t.tl:2:11: error: integer literal '123456789012345678901234' does not fit in 64 bits\n"
                     "  let x = 123456789012345678901234;\n"
                     "          ^" + std::string(23, '~') + "\n"
                     "1 error generated.\n");
}

TEST_CASE("diagnostics: a one-character range is a caret alone; a range over lines too") {
    SourceFile f("t.tl", kSource);
    DiagnosticEngine d(f);
    d.report(DiagId::err_invalid_character, SourceRange{SourceLoc{1, 12}}, "'{'");
    d.report(DiagId::err_no_kernel, range(1, 1, 3, 1));
    CHECK(text(d) == "t.tl:1:12: error: invalid character '{' in source\n"
                     "kernel k() {\n"
                     "           ^\n"
                     "t.tl:1:1: error: no kernel in this file; expected 'kernel NAME(...) { ... }'\n"
                     "kernel k() {\n"
                     "^\n"
                     "2 errors generated.\n");
}

TEST_CASE("diagnostics: no location prints no source line") {
    SourceFile f("t.tl", kSource);
    DiagnosticEngine d(f);
    d.report(DiagId::err_input_too_large, SourceRange{}, 10, 5);
    CHECK(text(d) == "t.tl: error: input is 10 bytes; tlc accepts at most 5\n1 error generated.\n");
}

TEST_CASE("diagnostics: the underline stops at the end of the line") {
    SourceFile f("t.tl", "ab\n");
    DiagnosticEngine d(f);
    d.report(DiagId::err_invalid_character, range(1, 2, 1, 40), "'b'");
    CHECK(text(d).find("ab\n ^~\n") != std::string::npos);
}

TEST_CASE("diagnostics: tabs and control characters keep the caret aligned") {
    SourceFile f("t.tl", "\tx\x01 @\n");
    DiagnosticEngine d(f);
    d.report(DiagId::err_invalid_character, SourceRange{SourceLoc{1, 5}}, "'@'");
    CHECK(text(d).find("\n x? @\n    ^\n") != std::string::npos);
}

TEST_CASE("diagnostics: columns count characters, not bytes") {
    // 'é' is two bytes; '@' is the 9th character of the line.
    SourceFile f("t.tl", "/* \xc3\xa9 */ @\n");
    DiagnosticEngine d(f);
    d.report(DiagId::err_invalid_character, SourceRange{SourceLoc{1, 9}}, "'@'");
    CHECK(text(d) == "t.tl:1:9: error: invalid character '@' in source\n"
                     "/* \xc3\xa9 */ @\n"
                     "        ^\n"
                     "1 error generated.\n");
}

TEST_CASE("diagnostics: lines that are not UTF-8 print '?' for the bad bytes") {
    SourceFile f("t.tl", "// caf\xe9 @\n");
    DiagnosticEngine d(f);
    d.report(DiagId::err_invalid_utf8, SourceRange{SourceLoc{1, 7}});
    CHECK(text(d).find("\n// caf? @\n      ^\n") != std::string::npos);
}

TEST_CASE("diagnostics: very long lines are clipped around the caret") {
    std::string line(5000, 'a');
    line[3000] = '@';
    SourceFile f("t.tl", line + "\n");
    DiagnosticEngine d(f);
    d.report(DiagId::err_invalid_character, SourceRange{SourceLoc{1, 3001}}, "'@'");
    std::string out = text(d);
    std::istringstream in(out);
    std::string first, quoted, marker;
    std::getline(in, first);
    std::getline(in, quoted);
    std::getline(in, marker);
    CHECK(first == "t.tl:1:3001: error: invalid character '@' in source");
    CHECK(quoted.size() == 160);
    REQUIRE(marker.size() >= 1);
    CHECK(marker.back() == '^');
    // The caret is under the '@'.
    CHECK(quoted[marker.size() - 1] == '@');
}

TEST_CASE("diagnostics: a long line whose error is near the start is clipped at the end") {
    std::string line = "@" + std::string(5000, 'b');
    SourceFile f("t.tl", line);
    DiagnosticEngine d(f);
    d.report(DiagId::err_invalid_character, SourceRange{SourceLoc{1, 1}}, "'@'");
    std::string out = text(d);
    CHECK(out.find("\n@" + std::string(159, 'b') + "\n^\n") != std::string::npos);
}

TEST_CASE("diagnostics: colour only when asked for") {
    SourceFile f("t.tl", kSource);
    DiagnosticEngine d(f);
    d.report(DiagId::err_no_kernel, SourceRange{SourceLoc{1, 1}});
    CHECK(text(d, false).find('\033') == std::string::npos);
    std::string colored = text(d, true);
    CHECK(colored.find("\033[1;31merror: ") != std::string::npos);
    CHECK(colored.find("\033[0m") != std::string::npos);
}

TEST_CASE("diagnostics: notes follow their diagnostic in text and nest in JSON") {
    SourceFile f("t.tl", kSource);
    DiagnosticEngine d(f);
    d.report(DiagId::err_integer_literal_too_large, range(2, 11, 2, 34), "1234");
    d.note(SourceRange{SourceLoc{1, 8}}, "kernel 'k' starts here");
    d.report(DiagId::err_no_kernel, SourceRange{SourceLoc{3, 1}});
    std::string out = text(d);
    size_t err1 = out.find("t.tl:2:11: error:");
    size_t note = out.find("t.tl:1:8: note: kernel 'k' starts here\nkernel k() {\n       ^\n");
    size_t err2 = out.find("t.tl:3:1: error:");
    REQUIRE(err1 != std::string::npos);
    REQUIRE(note != std::string::npos);
    REQUIRE(err2 != std::string::npos);
    CHECK(err1 < note);
    CHECK(note < err2);
    CHECK(d.errorCount() == 2);  // notes are not errors

    auto j = nlohmann::json::parse(d.toJson());
    REQUIRE(j.is_array());
    REQUIRE(j.size() == 2);
    REQUIRE(j[0].contains("notes"));
    REQUIRE(j[0]["notes"].size() == 1);
    CHECK(j[0]["notes"][0]["severity"] == "note");
    CHECK(j[0]["notes"][0]["message"] == "kernel 'k' starts here");
    CHECK(j[0]["notes"][0]["line"] == 1);
    CHECK(j[0]["notes"][0]["column"] == 8);
    CHECK(!j[1].contains("notes"));
}

TEST_CASE("diagnostics: a note with nothing before it is dropped") {
    SourceFile f("t.tl", kSource);
    DiagnosticEngine d(f);
    d.note(SourceRange{SourceLoc{1, 1}}, "orphan");
    CHECK(d.diagnostics().empty());
    CHECK(text(d).empty());
}

TEST_CASE("diagnostics: JSON has every field") {
    SourceFile f("dir/t.tl", kSource);
    DiagnosticEngine d(f);
    d.report(DiagId::err_integer_literal_too_large, range(2, 11, 2, 34), "1\"2");
    d.report(DiagId::err_input_too_large, SourceRange{}, 1, 2);
    std::ostringstream os;
    d.printJson(os);
    CHECK(os.str().back() == '\n');
    auto j = nlohmann::json::parse(os.str());
    REQUIRE(j.size() == 2);
    CHECK(j[0]["id"] == "err_integer_literal_too_large");
    CHECK(j[0]["severity"] == "error");
    CHECK(j[0]["message"] == "integer literal '1\"2' does not fit in 64 bits");
    CHECK(j[0]["file"] == "dir/t.tl");
    CHECK(j[0]["line"] == 2);
    CHECK(j[0]["column"] == 11);
    CHECK(j[0]["end_line"] == 2);
    CHECK(j[0]["end_column"] == 34);
    // No location: no line/column fields at all (rather than zeros).
    CHECK(j[1]["id"] == "err_input_too_large");
    CHECK(!j[1].contains("line"));
    CHECK(!j[1].contains("column"));
}

TEST_CASE("diagnostics: JSON of no diagnostics is an empty array") {
    SourceFile f("t.tl", kSource);
    DiagnosticEngine d(f);
    CHECK(nlohmann::json::parse(d.toJson()) == nlohmann::json::array());
    CHECK(text(d).empty());
}

TEST_CASE("diagnostics: warnings, and -Werror") {
    auto warn = firstWith(Severity::Warning);
    if (!warn) {
        MESSAGE("no warning in Diagnostics.def yet: nothing to promote");
        return;
    }
    SourceFile f("t.tl", kSource);
    {
        DiagnosticEngine d(f);
        reportAny(d, *warn, SourceRange{SourceLoc{1, 1}});
        CHECK(!d.hasErrors());
        CHECK(d.warningCount() == 1);
        CHECK(d.diagnostics().at(0).severity == Severity::Warning);
        std::string out = text(d);
        CHECK(out.find("t.tl:1:1: warning: ") == 0);
        CHECK(out.find("1 warning generated.\n") != std::string::npos);
        reportAny(d, DiagId::err_no_kernel, SourceRange{SourceLoc{1, 1}});
        CHECK(text(d).find("1 warning and 1 error generated.\n") != std::string::npos);
    }
    {
        DiagnosticEngine d(f);
        d.setWarningsAsErrors(true);
        reportAny(d, *warn, SourceRange{SourceLoc{1, 1}});
        CHECK(d.hasErrors());
        CHECK(d.errorCount() == 1);
        CHECK(d.warningCount() == 0);
        CHECK(d.diagnostics().at(0).severity == Severity::Error);
        CHECK(text(d).find("t.tl:1:1: error: ") == 0);
        auto j = nlohmann::json::parse(d.toJson());
        CHECK(j[0]["severity"] == "error");
        CHECK(j[0]["id"] == diagInfo(*warn).name);  // the id stays the warning's
    }
}

TEST_CASE("diagnostics: the error limit stops collecting and says so once") {
    SourceFile f("t.tl", kSource);
    DiagnosticEngine d(f);
    d.setErrorLimit(2);
    for (int i = 0; i < 5; ++i) {
        d.report(DiagId::err_invalid_character, SourceRange{SourceLoc{1, uint32_t(i + 1)}}, "'x'");
        d.note(SourceRange{SourceLoc{2, 1}}, "note " + std::to_string(i));
    }
    CHECK(d.errorCount() == 2);
    CHECK(d.errorLimitReached());
    REQUIRE(d.diagnostics().size() == 3);
    CHECK(d.diagnostics()[2].id == DiagId::err_too_many_errors);
    CHECK(d.diagnostics()[2].message == "too many errors; stopping");
    // Notes of discarded errors are dropped, not attached to something else.
    CHECK(d.diagnostics()[0].notes.size() == 1);
    CHECK(d.diagnostics()[1].notes.size() == 1);
    CHECK(d.diagnostics()[2].notes.empty());
    std::string out = text(d);
    CHECK(out.find("note 2") == std::string::npos);
    CHECK(out.find("too many errors; stopping") != std::string::npos);
}

TEST_CASE("diagnostics: an error limit of 0 means no limit") {
    SourceFile f("t.tl", kSource);
    DiagnosticEngine d(f);
    d.setErrorLimit(0);
    for (int i = 0; i < 500; ++i) d.report(DiagId::err_no_kernel, SourceRange{SourceLoc{1, 1}});
    CHECK(d.errorCount() == 500);
    CHECK(!d.errorLimitReached());
    CHECK(text(d).find("500 errors generated.") != std::string::npos);
}

TEST_CASE("diagnostics: merging repeats keeps the first of equal reports, with its notes") {
    SourceFile f("t.tl", kSource);
    DiagnosticEngine d(f);
    d.report(DiagId::err_no_kernel, SourceRange{SourceLoc{1, 1}});
    d.setMergeRepeats(true);
    for (int i = 0; i < 3; ++i) {
        d.report(DiagId::err_invalid_character, SourceRange{SourceLoc{2, 3}}, "'x'");
        d.note(SourceRange{SourceLoc{1, 1}}, "note " + std::to_string(i));
    }
    d.report(DiagId::err_invalid_character, SourceRange{SourceLoc{2, 4}}, "'x'");  // elsewhere: kept
    d.report(DiagId::err_invalid_character, SourceRange{SourceLoc{2, 3}}, "'y'");  // other text: kept
    d.report(DiagId::err_no_kernel, SourceRange{SourceLoc{1, 1}});  // repeats one from before: kept
    d.setMergeRepeats(false);
    d.report(DiagId::err_invalid_character, SourceRange{SourceLoc{2, 3}}, "'x'");  // off again: kept
    REQUIRE(d.diagnostics().size() == 6);
    CHECK(d.errorCount() == 6);
    REQUIRE(d.diagnostics()[1].notes.size() == 1);
    CHECK(d.diagnostics()[1].notes[0].message == "note 0");
}

// ---- --verify --------------------------------------------------------------------------------

namespace {
struct VerifyResult {
    bool ok;
    std::string report;
};

// `source` holds the expectations; `add` reports what the "compiler" found.
template <typename F> VerifyResult verify(const std::string& source, F add) {
    SourceFile f("v.tl", source);
    DiagnosticEngine d(f);
    add(d);
    std::ostringstream os;
    bool ok = verifyDiagnostics(d, os);
    return {ok, os.str()};
}

SourceRange at(uint32_t line, uint32_t col = 1) { return SourceRange{SourceLoc{line, col}}; }
} // namespace

TEST_CASE("verify: a matching expectation on the same line passes") {
    auto r = verify("let x = 1;  // expected-error {{does not fit}}\n", [](DiagnosticEngine& d) {
        d.report(DiagId::err_integer_literal_too_large, at(1, 9), "1");
    });
    CHECK(r.ok);
    CHECK(r.report.empty());
}

TEST_CASE("verify: relative and absolute line offsets") {
    std::string src = "// expected-error@+1 {{invalid character '@'}}\n"  // 1
                      "@\n"                                                // 2
                      "#\n"                                                // 3
                      "// expected-error@-1 {{invalid character '#'}}\n"  // 4
                      "// expected-error@6 {{no kernel}}\n"                // 5
                      "\n";                                                // 6
    auto r = verify(src, [](DiagnosticEngine& d) {
        d.report(DiagId::err_invalid_character, at(2), "'@'");
        d.report(DiagId::err_invalid_character, at(3), "'#'");
        d.report(DiagId::err_no_kernel, at(6));
    });
    CHECK_MESSAGE(r.ok, r.report);
}

TEST_CASE("verify: a diagnostic on another line does not match") {
    auto r = verify("// expected-error@+1 {{no kernel}}\n\n\n", [](DiagnosticEngine& d) {
        d.report(DiagId::err_no_kernel, at(3));
    });
    CHECK(!r.ok);
    CHECK(r.report.find("v.tl:3:1: unexpected error: no kernel") != std::string::npos);
    CHECK(r.report.find("v.tl:1: expected error on line 2 was not reported: {{no kernel}}") != std::string::npos);
}

TEST_CASE("verify: severities must match") {
    auto r = verify("x // expected-warning {{no kernel}}\n", [](DiagnosticEngine& d) {
        d.report(DiagId::err_no_kernel, at(1));
    });
    CHECK(!r.ok);
    CHECK(r.report.find("unexpected error") != std::string::npos);
    CHECK(r.report.find("expected warning on line 1 was not reported") != std::string::npos);
}

TEST_CASE("verify: the expected text is a substring of the message") {
    auto ok = verify("x // expected-error {{kernel in this}}\n", [](DiagnosticEngine& d) {
        d.report(DiagId::err_no_kernel, at(1));
    });
    CHECK(ok.ok);
    auto bad = verify("x // expected-error {{kernel in that}}\n", [](DiagnosticEngine& d) {
        d.report(DiagId::err_no_kernel, at(1));
    });
    CHECK(!bad.ok);
}

TEST_CASE("verify: every diagnostic needs its own expectation") {
    std::string src = "x // expected-error {{invalid character}}\n";
    auto once = verify(src, [](DiagnosticEngine& d) {
        d.report(DiagId::err_invalid_character, at(1, 1), "'x'");
        d.report(DiagId::err_invalid_character, at(1, 3), "'y'");
    });
    CHECK(!once.ok);
    CHECK(once.report.find("unexpected error: invalid character 'y'") != std::string::npos);
    auto twice = verify("x // expected-error {{invalid character 'x'}} expected-error {{'y'}}\n",
                        [](DiagnosticEngine& d) {
                            d.report(DiagId::err_invalid_character, at(1, 1), "'x'");
                            d.report(DiagId::err_invalid_character, at(1, 3), "'y'");
                        });
    CHECK_MESSAGE(twice.ok, twice.report);
}

TEST_CASE("verify: notes must be expected too") {
    std::string src = "let a = 1;  // expected-note {{declared here}}\n"
                      "let a = 2;  // expected-error {{no kernel}}\n";
    auto withNote = [](DiagnosticEngine& d) {
        d.report(DiagId::err_no_kernel, at(2));
        d.note(at(1), "'a' declared here");
    };
    CHECK(verify(src, withNote).ok);
    auto r = verify("let a = 2;  // expected-error {{no kernel}}\n\n", [](DiagnosticEngine& d) {
        d.report(DiagId::err_no_kernel, at(1));
        d.note(at(2), "'a' declared here");
    });
    CHECK(!r.ok);
    CHECK(r.report.find("v.tl:2:1: unexpected note: 'a' declared here") != std::string::npos);
}

TEST_CASE("verify: no expectations and no diagnostics passes; an unmet one fails") {
    CHECK(verify("kernel k() {}\n", [](DiagnosticEngine&) {}).ok);
    auto r = verify("// expected-error {{something}}\n", [](DiagnosticEngine&) {});
    CHECK(!r.ok);
    CHECK(r.report.find("was not reported: {{something}}") != std::string::npos);
}

TEST_CASE("verify: an expectation pointing outside the file is an error") {
    auto r = verify("// expected-error@+5 {{x}}\n", [](DiagnosticEngine&) {});
    CHECK(!r.ok);
    CHECK(r.report.find("outside the file") != std::string::npos);
    auto r0 = verify("// expected-error@0 {{x}}\n", [](DiagnosticEngine&) {});
    CHECK(!r0.ok);
}

TEST_CASE("verify: diagnostics without a location cannot be matched by a line") {
    auto r = verify("// expected-error {{tlc accepts at most}}\n", [](DiagnosticEngine& d) {
        d.report(DiagId::err_input_too_large, SourceRange{}, 10, 5);
    });
    CHECK(!r.ok);
}

TEST_CASE("verify: a line number too large for 64 bits is outside the file, not a crash") {
    // Found by fuzzing (tests/fuzz/crashes-fixed/verify-huge-line-offset.tl): std::stoll threw.
    for (const char* src : {"// expected-error@99999999999999999999999999 {{x}}\n",
                            "// expected-error@+99999999999999999999999999 {{x}}\n",
                            "// expected-error@-99999999999999999999999999 {{x}}\n"}) {
        auto r = verify(src, [](DiagnosticEngine&) {});
        CHECK(!r.ok);
        CHECK(r.report.find("outside the file") != std::string::npos);
    }
}

TEST_CASE("verify: very long lines are scanned without recursion") {
    // std::regex recursed once per character here and overflowed the stack on a 300 KB line.
    std::string longText(1 << 20, 'a');
    auto unterminated = verify("// expected-error {{" + longText + "\n", [](DiagnosticEngine&) {});
    CHECK(unterminated.ok);  // not an expectation at all
    auto missing = verify("x // expected-error {{" + longText + "}}\n", [](DiagnosticEngine&) {});
    CHECK(!missing.ok);
    // Many expectations on one line, and lookalikes that are not expectations.
    std::string many;
    for (int i = 0; i < 1000; ++i) many += " expected-error {{invalid}} expected-errors expected-note@ {{x}}";
    auto r = verify("@" + many + "\n", [](DiagnosticEngine& d) {
        for (int i = 0; i < 1000; ++i) d.report(DiagId::err_invalid_character, SourceRange{SourceLoc{1, 1}}, "'@'");
    });
    CHECK_MESSAGE(r.ok, r.report.substr(0, 500));
}

// printSource (--emit=tile-source): the text it writes parses back to the tree it printed, for
// every sample, corpus port and run-layer kernel, and printing that tree again gives the same
// text. Locations differ (the printer lays the code out anew), so trees compare without them.
#include "ast/AST.h"
#include "parser/Parser.h"
#include "support/Diagnostics.h"
#include "support/SourceFile.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

using namespace tlc;

namespace {

std::unique_ptr<ast::File> parseText(const std::string& name, const std::string& text, std::string& errors) {
    SourceFile source(name, text);
    DiagnosticEngine diags(source);
    std::unique_ptr<ast::File> file = parseFile(source, diags);
    std::ostringstream out;
    diags.printText(out, false);
    errors = out.str();
    return file;
}

std::string withoutLocations(const std::string& dump) { return std::regex_replace(dump, std::regex("  @[0-9]+:[0-9]+"), ""); }

} // namespace

TEST_CASE("printSource: printed source parses back to the same tree") {
    int files = 0;
    for (const char* dir : {"/samples", "/tests/corpus", "/tests/run/kernels", "/tests/lit/parse"})
        for (const auto& entry : std::filesystem::directory_iterator(std::string(TLC_SOURCE_DIR) + dir)) {
            if (entry.path().extension() != ".tl") continue;
            std::ifstream in(entry.path());
            std::stringstream text;
            text << in.rdbuf();
            std::string errors;
            std::unique_ptr<ast::File> original = parseText("original.tl", text.str(), errors);
            if (!original) continue;  // lit's parse tests include files with syntax errors
            const std::string printed = ast::printSource(*original);
            std::unique_ptr<ast::File> again = parseText("printed.tl", printed, errors);
            REQUIRE_MESSAGE(again, (entry.path().string() + ":\n" + errors + printed));
            CHECK_MESSAGE(withoutLocations(ast::dump(*again)) == withoutLocations(ast::dump(*original)), entry.path().string());
            CHECK_MESSAGE(ast::printSource(*again) == printed, entry.path().string());
            ++files;
        }
    CHECK(files > 60);
}

TEST_CASE("printSource: parentheses only where precedence needs them") {
    std::string errors;
    auto file = parseText("t.tl", R"(kernel k(A: f32[N]) {
    let a = (1 + 2) * 3 - (4 - 5) - 6;
    let b = -(a * 2) + -a * 2;
    let c = a < 2 ? (a == 1 ? 7 : 8) : a & 1 | 2;
    let d = (a | 1) & 2;
}
)", errors);
    REQUIRE_MESSAGE(file, errors);
    CHECK(ast::printSource(*file) == R"(kernel k(A: f32[N]) {
    let a = (1 + 2) * 3 - (4 - 5) - 6;
    let b = -(a * 2) + -a * 2;
    let c = a < 2 ? a == 1 ? 7 : 8 : a & 1 | 2;
    let d = (a | 1) & 2;
}
)");
}

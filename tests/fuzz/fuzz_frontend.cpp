// libFuzzer target: the front end (parser, AST builder, sema, diagnostics printing) on
// arbitrary bytes. Built by scripts/fuzz.sh (TLC_FUZZ=ON, clang++-15, ASan + UBSan); see
// docs/testing.md. Any crash, sanitizer report, leak or timeout is a bug.
#include "ast/AST.h"
#include "ast/Clone.h"
#include "parser/Parser.h"
#include "sema/Sema.h"
#include "support/Diagnostics.h"
#include "support/LargeStack.h"
#include "support/SourceFile.h"
#include "support/Verify.h"
#include "target/Target.h"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // The first byte picks a target (and so the target-dependent checks of sema); the rest is
    // the source, so that the corpus files stay readable .tl text after one byte.
    const tlc::Target* target = nullptr;
    std::string text(reinterpret_cast<const char*>(data), size);
    if (!text.empty()) {
        auto targets = tlc::allTargets();
        unsigned pick = static_cast<unsigned char>(text[0]) % (targets.size() + 1);
        if (pick < targets.size()) target = &targets[pick];
    }
    tlc::SourceFile source("fuzz.tl", text);
    tlc::DiagnosticEngine diags(source);
    diags.setErrorLimit(20);
    // The driver runs the front end on a large stack; so does this (ASan frames are bigger).
    tlc::runWithLargeStack([&] {
        std::unique_ptr<tlc::ast::File> file = tlc::parseFile(source, diags);
        // The parser works in groups of kernels on large files. With groups of one kernel it
        // must accept the same files, build the same trees and report the same errors.
        tlc::DiagnosticEngine groupedDiags(source);
        groupedDiags.setErrorLimit(20);
        tlc::ParseLimits tiny;
        tiny.groupTokens = 1;
        std::unique_ptr<tlc::ast::File> grouped = tlc::parseFile(source, groupedDiags, tiny);
        if (bool(file) != bool(grouped)) __builtin_trap();
        if (file && tlc::ast::dump(*file) != tlc::ast::dump(*grouped)) __builtin_trap();
        // The recommender checks copies of the parsed tree: a copy must be the tree.
        if (file && tlc::ast::dump(*tlc::ast::cloneSyntax(*file)) != tlc::ast::dump(*file)) __builtin_trap();
        if (!file) {
            const auto& a = diags.diagnostics();
            const auto& b = groupedDiags.diagnostics();
            if (a.empty() || a.size() != b.size()) __builtin_trap();
            for (size_t i = 0; i < a.size(); ++i)
                if (a[i].message != b[i].message || a[i].range.begin != b[i].range.begin) __builtin_trap();
        }
        if (file) {
            tlc::SemaOptions options;
            options.target = target;
            if (tlc::checkFile(*file, diags, options)) (void)tlc::ast::dump(*file);
        }
    });
    // Printing quotes source lines with carets: exercise it on whatever was reported.
    std::ostringstream sink;
    diags.printText(sink, /*color=*/true);
    diags.printJson(sink);
    tlc::verifyDiagnostics(diags, sink);
    return 0;
}

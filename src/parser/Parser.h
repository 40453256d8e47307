// Parsing .tl text into the AST. The generated ANTLR parser is an implementation detail of
// Parser.cpp / ASTBuilder.cpp; nothing else includes it.
#pragma once

#include "ast/AST.h"
#include "support/Diagnostics.h"

#include <memory>

namespace tlc {

// Limits that keep hostile input from exhausting the stack or the clock.
struct ParseLimits {
    size_t maxBytes = 16 * 1024 * 1024;
    unsigned maxNesting = 256;              // ( [ { depth
    unsigned maxTokensPerStatement = 20000; // between ; { }
    unsigned maxSyntaxErrors = 20;
    // Large files are parsed in groups of whole kernels of at least this many tokens (see
    // Parser.cpp). The result does not depend on it; the fuzzer checks that with tiny groups.
    unsigned groupTokens = 4096;
};

// Returns the AST, or null when the file has lexical or syntax errors (all reported to diags).
// An AST may come with errors that left it whole (ASTBuilder.h): sema checks it, then stops.
std::unique_ptr<ast::File> parseFile(const SourceFile& file, DiagnosticEngine& diags,
                                     const ParseLimits& limits = {});

} // namespace tlc

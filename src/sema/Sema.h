// Semantic analysis: name resolution, constant folding of compile-time parameters (after -D
// overrides), dtype/shape/scope inference for every expression and buffer, the signatures of
// the builtins, and every rule of docs/language.md's "what the checker rejects".
// Results are written into the AST (Expr::type, Expr::constant, Name::decl, Call::builtin...).
#pragma once

#include "ast/AST.h"
#include "support/Diagnostics.h"
#include "target/Target.h"

#include <map>
#include <string>

namespace tlc {

struct SemaOptions {
    const Target* target = nullptr;
    // -D NAME=VALUE, values as written on the command line.
    std::map<std::string, std::string> defines;
};

// Checks every kernel in the file; returns false if any error was reported.
bool checkFile(ast::File& file, DiagnosticEngine& diags, const SemaOptions& options);

} // namespace tlc

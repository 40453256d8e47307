// Internal to src/parser: turns ANTLR's parse tree into the owned AST.
#pragma once

#include "ast/AST.h"
#include "support/Diagnostics.h"

#include "TLParser.h"

#include <memory>

namespace tlc::parser {

SourceLoc tokenBegin(const antlr4::Token* token);
SourceLoc tokenEnd(const antlr4::Token* token);  // last character of the token

// Builds the AST of a parse tree that had no syntax errors. Literal errors (an integer that does
// not fit in 64 bits) are reported to diags and give no tree; a habit spelt differently
// (`for i, j in ...`) is reported and the tree, exactly what was meant, is still returned.
std::unique_ptr<ast::File> buildAST(TLParser::FileContext* tree, DiagnosticEngine& diags);

} // namespace tlc::parser

// A parsed tree, copied without sema's annotations (types, constants, declarations, builtins):
// one parse checked many times with different compile-time values, as the recommender does for
// its candidates. Clone before checking: a checked tree's annotations are not copied.
#pragma once

#include "ast/AST.h"

#include <memory>

namespace tlc::ast {

std::unique_ptr<File> cloneSyntax(const File& file);
std::unique_ptr<Kernel> cloneSyntax(const Kernel& kernel);
ExprPtr cloneSyntax(const Expr& e);

} // namespace tlc::ast

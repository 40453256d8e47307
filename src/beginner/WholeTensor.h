// The beginner level (docs/language.md, "Whole-tensor kernels"): a kernel body of assignments
// to whole tensors, with no grid, no buffers and no tile sizes, rewritten into the developer
// level's tile dataflow before it is checked. `--emit=tile-source` prints the result.
#pragma once

#include "ast/AST.h"
#include "support/Diagnostics.h"

#include <map>
#include <string>

namespace tlc::beginner {

// Rewrites every whole-tensor kernel of `file` in place; other kernels stay as they are.
// Returns false when one could not be lowered (reported to diags).
// `defines`: the -D names, which are known at compile time (attention's head dimension).
bool lowerWholeTensorKernels(ast::File& file, DiagnosticEngine& diags, const std::map<std::string, std::string>& defines);

} // namespace tlc::beginner

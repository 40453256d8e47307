// The beginner level's row kernels (layernorm, rmsnorm, softmax over the last dimension):
// RowKernels.cpp. Used by WholeTensor.cpp.
#pragma once

#include "ast/AST.h"
#include "support/Diagnostics.h"

namespace tlc::beginner {

bool isRowKernelCall(const ast::Call& c);
// Replaces `k`'s body (whose one statement is `s`, `Y = layernorm(...)` and the like) by the
// row kernel; false when `s` does not have the form (reported).
bool lowerRowKernel(ast::Kernel& k, const ast::AssignStmt& s, DiagnosticEngine& diags);

} // namespace tlc::beginner

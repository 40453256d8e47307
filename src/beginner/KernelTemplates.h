// The beginner level's kernels written from .tl templates (KernelTemplates.cpp): row kernels
// (layernorm, rmsnorm, softmax over the last dimension) and attention. Used by WholeTensor.cpp.
#pragma once

#include "ast/AST.h"
#include "support/Diagnostics.h"

#include <map>
#include <string>

namespace tlc::beginner {

bool isRowKernelCall(const ast::Call& c);
// Replaces `k`'s body (whose one statement is `s`, `Y = layernorm(...)` and the like) by the
// row kernel; false when `s` does not have the form (reported).
bool lowerRowKernel(ast::Kernel& k, const ast::AssignStmt& s, DiagnosticEngine& diags);
// `O = softmax(Q @ transpose(K) * scale, causal = c) @ V;`: flash attention.
bool isAttention(const ast::AssignStmt& s);
// The head dimension sizes tiles: a compile-time parameter, a literal or a -D'd size (`defines`).
bool lowerAttention(ast::Kernel& k, const ast::AssignStmt& s, const std::map<std::string, std::string>& defines,
                    DiagnosticEngine& diags);

} // namespace tlc::beginner

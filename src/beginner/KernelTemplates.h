// The beginner level's kernels written from .tl templates (KernelTemplates.cpp): row kernels
// (layernorm, rmsnorm, softmax over the last dimension) and attention. Used by WholeTensor.cpp.
#pragma once

#include "ast/AST.h"
#include "support/Diagnostics.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tlc::beginner {

// Fills a template's $names, parses it as the body of `k` with the tile parameters given, and
// puts it in place of `k`'s body (its `require`s first); every node takes `at` as its place.
bool instantiate(ast::Kernel& k, SourceRange at, std::string body, const std::string& tileParams,
                 const std::vector<std::pair<std::string, std::string>>& fills, DiagnosticEngine& diags);

bool isRowKernelCall(const ast::Call& c);
// Replaces `k`'s body (whose one statement is `s`, `Y = layernorm(...)` and the like) by the
// row kernel; false when `s` does not have the form (reported).
// A row of known length up to 8192 elements is read once and kept on chip; otherwise (any N) in
// chunks, read again by each pass. `defines`: -D values (a -D'd row length is known).
bool lowerRowKernel(ast::Kernel& k, const ast::AssignStmt& s, const std::map<std::string, std::string>& defines,
                    DiagnosticEngine& diags);
// `O = softmax(Q @ transpose(K) * scale, causal = c) @ V;`: flash attention.
bool isAttention(const ast::AssignStmt& s);
// The head dimension sizes tiles: a compile-time parameter, a literal or a -D'd size (`defines`).
bool lowerAttention(ast::Kernel& k, const ast::AssignStmt& s, const std::map<std::string, std::string>& defines,
                    DiagnosticEngine& diags);

} // namespace tlc::beginner

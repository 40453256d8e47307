// Reductions over a dimension in whole-tensor kernels (docs/language.md, "The beginner level"):
// `y = sum(X, dim = 1);`, `Y = X - max(X, dim = 1);`, lowered to row kernels (Reductions.cpp).
#pragma once

#include "ast/AST.h"
#include "support/Diagnostics.h"

namespace tlc::beginner {

// `sum(X, dim = d)`, `mean(...)`, and `max`/`min` with a `dim` (or one operand: a reduction of
// every element, which is refused).
bool isReductionCall(const ast::Call& c);
// Whether a statement or `let` of the kernel holds a reduction.
bool hasReduction(const ast::Kernel& k);
// Replaces `k`'s body by a row kernel: a pass over chunks of the reduced dimension per
// reduction, then a pass that writes. False when the kernel has no such form (reported).
bool lowerReductions(ast::Kernel& k, DiagnosticEngine& diags);
// `log(sum(exp(E), dim = d))` (or `mean`) as `max(E, dim = d) + log(sum(exp(E - max(E, dim = d)),
// dim = d))`: no overflow, and one online pass (ReductionPasses.cpp). In place (lowerReductions'
// statements, their `let`s inlined).
void desugarLogSumExp(ast::ExprPtr& x);
// A kernel with reductions that reads a product outside them (`Y = X @ W * rsqrt(mean(X * X,
// dim = 1) + eps)`): the reductions are statistics of the product's rows or columns its epilogue
// broadcasts, computed by each block before its K loop (GemmStatistics.cpp).
bool productBesideReductions(const ast::Kernel& k);
bool lowerGemmWithStatistics(ast::Kernel& k, DiagnosticEngine& diags);

} // namespace tlc::beginner

// Algebraic simplification of index arithmetic, so that emitted indices read like
// `by * 128 + i` instead of nests of zero additions and unit multiplications. Knows the ranges
// of loop variables and of the thread index, which lets it drop divisions and modulos that
// cannot matter ((tx % 32) / 32 -> 0) and decide bounds checks that always hold.
#pragma once

#include "ir/Expr.h"
#include "ir/Stmt.h"

#include <optional>
#include <utility>
#include <vector>

namespace tlc::ir {

struct Interval {
    int64_t lo, hi;  // inclusive
};

// Known ranges of variables (for example the thread index in [0, threads - 1]).
using VarBounds = std::vector<std::pair<const Var*, Interval>>;

Expr simplify(const Expr& e, const VarBounds& bounds = {});
Stmt simplify(const Stmt& s, const VarBounds& bounds = {});

// The range of an integer expression, if the simplifier can bound it.
std::optional<Interval> boundsOf(const Expr& e, const VarBounds& bounds = {});

// The largest power-of-two-free constant that is known to divide e (1 when nothing is known).
int64_t knownMultiple(const Expr& e);

// Structural equality of expressions (same shape, same variables by identity, same constants).
bool equal(const Expr& a, const Expr& b);

} // namespace tlc::ir

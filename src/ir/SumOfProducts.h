// An integer expression as a sum of products: c0 + sum(ci * f_i1 * f_i2 * ...), each factor an
// atom (a variable, or a sub-expression that is not +, -, * or a constant). The simplifier uses
// it where a difference may cancel however its sides are grouped: `(x + 1) * b - x * b` is `b`,
// `(x + 1) * 64 - x * 64` is `64` (sema's extents do the same over names, sema/Polynomial.h).
#pragma once

#include "ir/Expr.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tlc::ir {

struct SumOfProducts {
    struct Term {
        std::vector<Expr> factors;  // an atom each; matched as a multiset (structural equality)
        int64_t coeff = 0;
    };
    int64_t constant = 0;
    std::vector<Term> terms;  // no zero coefficients, no two with the same factors

    // Expressions with more terms than this (after expansion) are not expanded: nullopt.
    static constexpr size_t kMaxTerms = 16;

    // e as a sum of products, or nullopt (not an integer expression, too large, an overflow).
    static std::optional<SumOfProducts> of(const Expr& e);
    // a - b, or nullopt on overflow.
    std::optional<SumOfProducts> minus(const SumOfProducts& b) const;
    // The expression again: terms in order, `+ constant` last; the type of `like`.
    Expr toExpr(DType like) const;
};

} // namespace tlc::ir

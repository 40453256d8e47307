// The terms of a sum, however it is grouped: (a + b) + c and a + (b + c) both give a, b, c.
// For code that looks at an index term by term (VectorLoop, interleave-rows, the simplifier).
#pragma once

#include "ir/Expr.h"

#include <vector>

namespace tlc::ir {

inline void addends(const Expr& e, std::vector<Expr>& out) {
    if (const Binary* b = e.as<Binary>(); b && b->op == BinaryOp::Add) {
        addends(b->a, out);
        addends(b->b, out);
    } else {
        out.push_back(e);
    }
}

} // namespace tlc::ir

// Evaluates the integer index expressions layouts and swizzles produce, for tests that check
// them against tables by brute force.
#pragma once

#include "ir/Expr.h"

#include <doctest/doctest.h>

#include <map>

namespace tlc::testing {

using namespace tlc::ir;

inline int64_t evalInt(const Expr& e, const std::map<const Var*, int64_t>& env) {
    if (const int64_t* c = asConstInt(e)) return *c;
    if (const auto* v = e.as<Var>()) return env.at(v);
    if (const auto* c = e.as<Cast>()) return evalInt(c->value, env);
    const auto* b = e.as<Binary>();
    REQUIRE(b != nullptr);
    int64_t x = evalInt(b->a, env), y = evalInt(b->b, env);
    switch (b->op) {
    case BinaryOp::Add: return x + y;
    case BinaryOp::Sub: return x - y;
    case BinaryOp::Mul: return x * y;
    case BinaryOp::Div: return x / y;
    case BinaryOp::Mod: return x % y;
    case BinaryOp::Eq: return x == y;
    case BinaryOp::And: return x && y;
    case BinaryOp::Lt: return x < y;
    case BinaryOp::BitAnd: return x & y;
    case BinaryOp::BitXor: return x ^ y;
    case BinaryOp::Shl: return x << y;
    case BinaryOp::Shr: return x >> y;
    default: FAIL("unexpected operator"); return 0;
    }
}

} // namespace tlc::testing

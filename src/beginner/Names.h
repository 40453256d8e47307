// Names the beginner level's lowerings share: a kernel's tensor parameters by name, fresh names
// for the code they generate (base, base2, base3, ...: none an author's name), and the rewrite
// that replaces names (a `let`'s by its value) in the author's expressions.
#pragma once

#include "ast/AST.h"
#include "ast/Clone.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <set>
#include <string>

namespace tlc::beginner {

inline const ast::Param* tensorNamed(const ast::Kernel& k, const std::string& name) {
    for (const auto& p : k.params)
        if (p.name == name && p.type.isTensor()) return &p;
    return nullptr;
}

// `base`, or `base` with the first number that makes it new; added to `used`.
inline std::string freshName(std::set<std::string>& used, const std::string& base) {
    std::string name = base;
    for (int n = 2; used.count(name); ++n) name = fmt::format("{}{}", base, n);
    used.insert(name);
    return name;
}

// Replaces the nodes `f` names (true: replaced) and looks inside the others.
inline void replaceIn(ast::ExprPtr& x, const std::function<bool(ast::ExprPtr&)>& f) {
    using namespace ast;
    if (f(x)) return;
    switch (x->kind) {
    case ExprKind::Call:
        for (auto& a : x->as<Call>()->args) replaceIn(a.value, f);
        return;
    case ExprKind::Unary: replaceIn(x->as<Unary>()->operand, f); return;
    case ExprKind::Binary:
        replaceIn(x->as<Binary>()->lhs, f);
        replaceIn(x->as<Binary>()->rhs, f);
        return;
    case ExprKind::Ternary:
        replaceIn(x->as<Ternary>()->cond, f);
        replaceIn(x->as<Ternary>()->thenExpr, f);
        replaceIn(x->as<Ternary>()->elseExpr, f);
        return;
    default: return;
    }
}

// A copy of `e` with each name of a `let` replaced by a copy of its value.
inline ast::ExprPtr inlineLets(const ast::Expr& e, const std::map<std::string, ast::ExprPtr>& lets) {
    ast::ExprPtr out = ast::cloneSyntax(e);
    replaceIn(out, [&](ast::ExprPtr& x) {
        const auto* n = x->as<ast::Name>();
        if (!n || !lets.count(n->name)) return false;
        x = ast::cloneSyntax(*lets.at(n->name));
        return true;
    });
    return out;
}

} // namespace tlc::beginner

// Symbolic extents and expression text: polynomial normal forms, canonical text (so that equal
// extents compare equal), message text, and what a name's value depends on.
#include "sema/Checker.h"

#include <fmt/format.h>

namespace tlc::sema {

using namespace ast;

namespace {

// Names, literals, calls and subscripts print without parentheses in any operand position.
bool isAtomicText(const Expr& e) {
    if (e.constant) {
        auto i = asInt(*e.constant);
        return !i || *i >= 0;
    }
    return e.kind == ExprKind::Name || e.kind == ExprKind::Call || e.kind == ExprKind::Index ||
           e.kind == ExprKind::IntLit || e.kind == ExprKind::FloatLit || e.kind == ExprKind::BoolLit ||
           e.kind == ExprKind::List;
}

} // namespace


Extent KernelChecker::extentOf(const Expr& e) const {
    if (e.constant)
        if (auto v = asInt(*e.constant)) return Extent::constant(*v);
    return Extent::symbolic(canonical(e));
}

std::optional<Polynomial> KernelChecker::polynomialOf(const Expr& e) const {
    if (e.constant)
        if (auto v = asInt(*e.constant)) return Polynomial::number(*v);
    auto asAtom = [&]() {
        bool compound = !isAtomicText(e);
        return Polynomial::atom(structuralText(e), compound);
    };
    if (auto* u = e.as<Unary>(); u && u->op == UnaryOp::Neg) {
        if (auto p = polynomialOf(*u->operand); p)
            if (auto n = p->scaled(-1)) return n;
        return asAtom();
    }
    // Each operand is visited once (no text is built for a subtree that is then discarded),
    // so that long operator chains stay linear. Products distribute over sums whether their
    // factors are constants or not: `(bx + 1) * block_M - bx * block_M` is `block_M` with
    // block_M `auto` (unknown yet) as with block_M = 64.
    if (auto* b = e.as<Binary>(); b && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub || b->op == BinaryOp::Mul)) {
        auto l = polynomialOf(*b->lhs), r = polynomialOf(*b->rhs);
        auto out = b->op == BinaryOp::Add ? l->plus(*r) : b->op == BinaryOp::Sub ? l->minus(*r) : l->times(*r);
        if (out) return out;
        // Too large to expand (or an overflow): an atom whose text is made from the operands'
        // forms already computed, so that a chain of such products stays linear (rebuilding
        // the text from the tree would expand every operand again, at every level).
        return Polynomial::atom(operandText(*b->lhs, *l) + " " + spelling(b->op) + " " + operandText(*b->rhs, *r),
                                true);
    }
    return asAtom();
}

// The text structuralText gives an operand, from its polynomial form `p` already computed.
std::string KernelChecker::operandText(const Expr& x, const Polynomial& p) const {
    std::string text = x.constant ? toString(*x.constant)
                                  : x.type.isScalar() && isInteger(x.type.dtype) ? p.str() : structuralText(x);
    return isAtomicText(x) && (x.kind != ExprKind::Name || text.find(' ') == std::string::npos) ? text
                                                                                                : "(" + text + ")";
}

std::string KernelChecker::canonical(const Expr& e) const {
    if (e.constant) return toString(*e.constant);
    if (e.type.isScalar() && isInteger(e.type.dtype)) return polynomialOf(e)->str();
    return structuralText(e);
}

// Source-like text with constants substituted and operands in canonical form; used for
// atoms of polynomial forms and in messages.
std::string KernelChecker::structuralText(const Expr& e) const {
    if (e.constant && !std::holds_alternative<DType>(*e.constant)) return toString(*e.constant);
    auto operand = [&](const Expr& x) {
        std::string text = canonical(x);
        return isAtomicText(x) && (x.kind != ExprKind::Name || text.find(' ') == std::string::npos)
                   ? text
                   : "(" + text + ")";
    };
    switch (e.kind) {
    case ExprKind::IntLit: return std::to_string(e.as<IntLit>()->value);
    case ExprKind::FloatLit: return e.as<FloatLit>()->spelling;
    case ExprKind::BoolLit: return e.as<BoolLit>()->value ? "true" : "false";
    case ExprKind::StringLit: return "\"" + e.as<StringLit>()->value + "\"";
    case ExprKind::Name: return e.as<Name>()->name;
    case ExprKind::List: {
        std::string s = "[";
        for (const auto& el : e.as<List>()->elements) s += (s.size() > 1 ? ", " : "") + canonical(*el);
        return s + "]";
    }
    case ExprKind::Call: {
        const auto& c = *e.as<Call>();
        std::string s = c.callee + "(";
        bool first = true;
        for (const auto& a : c.args) {
            s += first ? "" : ", ";
            first = false;
            if (!a.keyword.empty()) s += a.keyword + " = ";
            s += canonical(*a.value);
        }
        return s + ")";
    }
    case ExprKind::Index: {
        const auto& ix = *e.as<Index>();
        std::string s = operand(*ix.base) + "[";
        for (size_t i = 0; i < ix.subscripts.size(); ++i) {
            const auto& sub = ix.subscripts[i];
            s += i ? ", " : "";
            switch (sub.form) {
            case Subscript::Form::Point: s += canonical(*sub.point); break;
            case Subscript::Form::Range:
                s += (sub.lo ? canonical(*sub.lo) : "") + ":" + (sub.hi ? canonical(*sub.hi) : "");
                break;
            case Subscript::Form::Length:
                s += (sub.lo ? canonical(*sub.lo) : "") + ":+" + canonical(*sub.length);
                break;
            }
        }
        return s + "]";
    }
    case ExprKind::Unary: {
        const auto& u = *e.as<Unary>();
        return spelling(u.op) + operand(*u.operand);
    }
    case ExprKind::Binary: {
        const auto& b = *e.as<Binary>();
        return operand(*b.lhs) + " " + spelling(b.op) + " " + operand(*b.rhs);
    }
    case ExprKind::Ternary: {
        const auto& t = *e.as<Ternary>();
        return operand(*t.cond) + " ? " + operand(*t.thenExpr) + " : " + operand(*t.elseExpr);
    }
    }
    return "?";
}

std::string KernelChecker::brief(const Expr& e) const {
    std::string text = structuralText(e);
    return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

void KernelChecker::collectDeps(const Expr& e, std::set<const Decl*>& out) const {
    visitNames(e, [&](const Name& n) {
        if (!n.decl) return;
        out.insert(n.decl);
        if (auto it = deps_.find(n.decl); it != deps_.end()) out.insert(it->second.begin(), it->second.end());
    });
}

const Decl* KernelChecker::rootDecl(const Expr& e) const {
    if (auto* n = e.as<Name>()) return n->decl;
    if (auto* ix = e.as<Index>()) return rootDecl(*ix->base);
    return nullptr;
}

std::string KernelChecker::describe(const Expr& e) const {
    const Type& t = e.type;
    const Decl* root = rootDecl(e);
    if ((t.kind == Type::Kind::Tensor || t.kind == Type::Kind::Region) && root) {
        std::string what = t.scope == MemScope::Global
                               ? fmt::format("global tensor '{}'", root->name)
                               : fmt::format("{} buffer '{}'", scopeName(t.scope), root->name);
        return t.kind == Type::Kind::Region ? "a region of " + what : what;
    }
    if (t.kind == Type::Kind::DTypeValue && e.constant) return fmt::format("dtype '{}'", toString(*e.constant));
    if (t.kind == Type::Kind::Shape) return t.shape.empty() ? "an empty list" : "a list";
    return t.str();
}

void KernelChecker::noteDeclared(const Expr& e) {
    if (const Decl* d = rootDecl(e)) diags_.note(d->range, fmt::format("'{}' declared here", d->name));
}

} // namespace tlc::sema

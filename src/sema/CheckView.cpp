// view(tensor, [extents]): a contiguous global tensor seen with another shape of the same number
// of elements (TileLang's `T.Tensor(shape, dtype, t.data)`). The extents are integer expressions
// the launcher can compute (it builds TMA maps and bounds from them), and the element counts must
// be equal as polynomials over the sizes: `let` names stand for their values, and a division by a
// constant that divides every coefficient is exact (`(H + 2 * P - 3) / S + 1` with S = 1 is H).
#include "sema/Checker.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace tlc::sema {

using namespace ast;

namespace {

// Element counts are compared expanded, so they may grow larger than an extent's canonical form
// (lets that square each other are refused rather than expanded without bound).
constexpr size_t kMaxTerms = 256;

struct PolyBuilder {
    const KernelChecker& checker;
    int depth = 0;
    int budget = 4096;  // expressions visited, lets expanded each time they are named

    std::optional<Polynomial> of(const Expr& e) {
        if (e.constant) {
            if (auto v = asInt(*e.constant)) return Polynomial::number(*v);
            return std::nullopt;
        }
        if (++depth > 64 || --budget < 0) {  // lets nest and repeat: bounded work
            --depth;
            return std::nullopt;
        }
        std::optional<Polynomial> out = build(e);
        --depth;
        return out;
    }

    std::optional<Polynomial> build(const Expr& e) {
        if (const auto* n = e.as<Name>()) {
            // A `let` stands for its value, so that `let OH = H - 2;` and `H - 2` agree.
            if (n->decl && n->decl->kind == Decl::Kind::Let && n->decl->stmt)
                if (const auto* let = n->decl->stmt->as<LetStmt>()) return of(*let->value);
            return Polynomial::atom(n->name);
        }
        if (const auto* u = e.as<Unary>(); u && u->op == UnaryOp::Neg) {
            auto p = of(*u->operand);
            return p ? p->scaled(-1) : std::nullopt;
        }
        if (const auto* b = e.as<Binary>()) {
            if (b->op == BinaryOp::Add || b->op == BinaryOp::Sub || b->op == BinaryOp::Mul) {
                auto l = of(*b->lhs), r = of(*b->rhs);
                if (!l || !r) return std::nullopt;
                if (b->op == BinaryOp::Mul) return l->times(*r, kMaxTerms);
                return b->op == BinaryOp::Add ? l->plus(*r) : l->minus(*r);
            }
            if (b->op == BinaryOp::Div && b->rhs->constant) {
                auto d = asInt(*b->rhs->constant);
                auto l = of(*b->lhs);
                if (d && l)
                    if (auto q = l->dividedExactly(*d)) return q;
            }
        }
        return Polynomial::atom(checker.structuralText(e));
    }
};

std::string productText(const Shape& s) {
    std::string out;
    for (const Extent& e : s) {
        std::string t = e.str();
        if (!e.isConstant() && t.find(' ') != std::string::npos) t = "(" + t + ")";
        out += (out.empty() ? "" : " * ") + t;
    }
    return out;
}

} // namespace

const Decl* KernelChecker::notKnownAtLaunch(const Expr& e, const char*& why) const {
    std::set<const Decl*> deps;
    collectDeps(e, deps);
    for (const Decl* d : deps) {
        why = nullptr;
        switch (d->kind) {
        case Decl::Kind::LoopVar: why = "is a loop variable"; break;
        case Decl::Kind::GridVar: why = "is a grid variable"; break;
        case Decl::Kind::Var: why = "is a variable"; break;
        case Decl::Kind::TensorParam: why = "is a tensor: its elements are read inside the grid"; break;
        case Decl::Kind::Let:
            if (!d->type.isScalar()) why = "is not a scalar";
            break;
        default: break;
        }
        if (why) return d;
    }
    return nullptr;
}

Type KernelChecker::checkView(Call& c) {
    Expr& tensor = const_cast<Expr&>(*c.boundArgs[0]);
    Expr& dims = const_cast<Expr&>(*c.boundArgs[1]);
    const Type& t = tensor.type;
    if (t.kind != Type::Kind::Tensor || t.scope != MemScope::Global || !tensor.as<Name>()) {
        diags_.report(DiagId::err_arg_kind, tensor.range, "tensor", c.callee,
                      "a whole global tensor (a tensor parameter or another view)", describe(tensor));
        return Type::error();
    }
    const Decl* root = rootDecl(tensor);
    if (root && root->kind == Decl::Kind::TensorParam)
        for (const auto& p : kernel_.params)
            if (p.decl == root && !p.type.strides.empty()) {
                diags_.report(DiagId::err_view_strided, tensor.range, root->name);
                diags_.note(root->range, fmt::format("'{}' declared here", root->name));
                return Type::error();
            }

    // The launcher computes the view's extents (bounds, TMA maps): sizes, parameters and
    // compile-time values only.
    const auto& elements = dims.as<List>()->elements;
    bool ok = true;
    for (const auto& el : elements) {
        const char* why = nullptr;
        if (const Decl* d = notKnownAtLaunch(*el, why)) {
            diags_.report(DiagId::err_view_extent_not_at_launch, el->range, d->name, why);
            diags_.note(d->range, fmt::format("'{}' declared here", d->name));
            ok = false;
        }
    }
    if (!ok) return Type::error();

    Shape shape;
    for (const auto& el : elements) shape.push_back(extentOf(*el));
    // Equal element counts, as polynomials over the sizes. Counts that cannot be compared (an
    // overflow, or expressions too large to expand) are not provably equal either: an error.
    PolyBuilder builder{*this};
    std::optional<Polynomial> viewCount = Polynomial::number(1), tensorCount = Polynomial::number(1);
    auto times = [](const std::optional<Polynomial>& count, const std::optional<Polynomial>& p) {
        return p && count ? count->times(*p, kMaxTerms) : std::nullopt;
    };
    for (const auto& el : elements) viewCount = times(viewCount, builder.of(*el));
    const Param* param = nullptr;
    for (const auto& p : kernel_.params)
        if (p.decl == root) param = &p;
    if (param) {
        for (const auto& dim : param->type.dims) tensorCount = times(tensorCount, builder.of(*dim));
    } else if (root && root->stmt) {  // a view of a view: its extents
        const auto* let = root->stmt->as<LetStmt>();
        const auto* call = let ? let->value->as<Call>() : nullptr;
        const auto* list = call && call->boundArgs.size() > 1 ? call->boundArgs[1]->as<List>() : nullptr;
        if (!list) tensorCount = std::nullopt;
        else
            for (const auto& el : list->elements) tensorCount = times(tensorCount, builder.of(*el));
    }
    if (!viewCount || !tensorCount || !viewCount->sameAs(*tensorCount)) {
        diags_.report(DiagId::err_view_element_count, dims.range, productText(shape), root ? root->name : brief(tensor),
                      productText(t.shape));
        if (root) diags_.note(root->range, fmt::format("'{}' declared here", root->name));
        return Type::error();
    }
    return Type::tensor(MemScope::Global, t.dtype, std::move(shape));
}

} // namespace tlc::sema

// Whole-tile assignments: `G_f = silu(G_f) * U_f;` with on-chip tiles of one shape stands for
//
//     for (i, j) in parallel(64, 64) { G_f[i, j] = silu(G_f[i, j]) * U_f[i, j]; }
//
// the loop an author would otherwise write for each step of an elementwise chain. The rewrite
// happens before the statement is checked, so the loop is checked, inferred and lowered as if
// written by hand (and --emit=ast shows it).
#include "ast/Clone.h"
#include "sema/Checker.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::sema {

using namespace ast;

namespace {

bool isOnChipTile(const Decl& d) {
    return d.type.kind == Type::Kind::Tensor && d.type.scope != MemScope::Global;
}

// The extents of the buffer `d` as expressions: the allocation's shape list when it has one
// (it may use `auto` parameters, which the recommender binds later), else the shape sema found.
std::vector<ExprPtr> extentExprs(const Decl& d, SourceRange at) {
    std::vector<ExprPtr> out;
    if (const auto* let = d.stmt ? d.stmt->as<LetStmt>() : nullptr)
        if (const auto* alloc = let->value->as<Call>(); alloc && !alloc->args.empty())
            if (const auto* list = alloc->args[0].value->as<List>(); list && list->elements.size() == d.type.rank()) {
                for (const auto& e : list->elements) out.push_back(cloneSyntax(*e));
                return out;
            }
    for (const Extent& e : d.type.shape) {
        if (!e.isConstant()) return {};
        out.push_back(std::make_unique<IntLit>(at, *e.value));
    }
    return out;
}

// `base[i, j]` at the loop's variables.
ExprPtr elementAt(ExprPtr base, const std::vector<std::string>& vars, SourceRange r) {
    std::vector<Subscript> subs;
    for (const auto& v : vars) {
        Subscript sub;
        sub.point = std::make_unique<Name>(r, v);
        sub.range = r;
        subs.push_back(std::move(sub));
    }
    return std::make_unique<Index>(r, std::move(base), std::move(subs));
}

} // namespace

StmtPtr KernelChecker::wholeTileLoop(AssignStmt& s) {
    auto* target = s.target->as<Name>();
    if (!target || !inGrid_ || !parallel_.empty()) return nullptr;
    const Decl* d = scope_.lookup(target->name);
    if (!d || !buffers_.count(d) || !isOnChipTile(*d) || d->type.rank() == 0) return nullptr;
    std::vector<ExprPtr> extents = extentExprs(*d, target->range);
    if (extents.empty()) return nullptr;  // an `auto` shape not known yet: checkAssign says so

    // Loop variables named as people name them, skipping names the value could mean.
    std::vector<std::string> vars;
    static const char* kNames[] = {"i", "j", "k", "l", "m", "n", "p", "q"};
    for (size_t dim = 0, next = 0; dim < d->type.rank(); ++dim) {
        std::string name;
        do {
            name = next < std::size(kNames) ? kNames[next] : fmt::format("i{}", next);
            ++next;
        } while (scope_.lookup(name));
        vars.push_back(std::move(name));
    }
    if (!indexWholeTiles(s.value, *d, vars)) return std::make_unique<Block>(s.range, std::vector<StmtPtr>{});

    std::vector<StmtPtr> body;
    ExprPtr element = elementAt(std::make_unique<Name>(target->range, target->name), vars, target->range);
    body.push_back(std::make_unique<AssignStmt>(s.range, std::move(element), s.op, std::move(s.value)));
    std::vector<Arg> args;
    for (auto& e : extents) args.push_back(Arg{{}, {}, std::move(e)});
    std::vector<LoopVar> loopVars;
    for (const auto& v : vars) loopVars.push_back({v, target->range, nullptr});
    auto parallel = std::make_unique<Call>(s.range, "parallel", target->range, std::move(args));
    return std::make_unique<ForStmt>(s.range, std::move(loopVars), std::move(parallel),
                                     std::make_unique<Block>(s.range, std::move(body)));
}

// Replaces each whole on-chip tile named in `e` by its element at `vars`; false when one has
// another shape (reported). Element reads (`scale[0]`) and scalars stay as they are.
bool KernelChecker::indexWholeTiles(ExprPtr& e, const Decl& target, const std::vector<std::string>& vars) {
    switch (e->kind) {
    case ExprKind::Name: {
        const Decl* d = scope_.lookup(e->as<Name>()->name);
        if (!d || !(d->type.kind == Type::Kind::Tensor)) return true;
        if (!isOnChipTile(*d) || d->type.shape != target.type.shape) {
            diags_.report(DiagId::err_whole_tile_operand, e->range,
                          fmt::format("'{}'", d->name), target.name,
                          fmt::format("is {} {}", d->type.scope == MemScope::Global ? "the global tensor" : "a tile of shape",
                                      shapeString(d->type.shape)),
                          shapeString(target.type.shape));
            diags_.note(d->range, fmt::format("'{}' declared here", d->name));
            return false;
        }
        SourceRange r = e->range;
        e = elementAt(std::move(e), vars, r);
        return true;
    }
    case ExprKind::Call: {
        bool ok = true;
        for (auto& a : e->as<Call>()->args) ok = indexWholeTiles(a.value, target, vars) && ok;
        return ok;
    }
    case ExprKind::Unary: return indexWholeTiles(e->as<Unary>()->operand, target, vars);
    case ExprKind::Binary: {
        auto* b = e->as<Binary>();
        bool lhs = indexWholeTiles(b->lhs, target, vars);
        return indexWholeTiles(b->rhs, target, vars) && lhs;
    }
    case ExprKind::Ternary: {
        auto* t = e->as<Ternary>();
        bool ok = indexWholeTiles(t->cond, target, vars);
        ok = indexWholeTiles(t->thenExpr, target, vars) && ok;
        return indexWholeTiles(t->elseExpr, target, vars) && ok;
    }
    case ExprKind::Index: {
        // An element read (`s[0]`) is a scalar; a region is a tile of its own extents.
        const auto& subs = e->as<Index>()->subscripts;
        bool region = std::any_of(subs.begin(), subs.end(), [](const Subscript& sub) { return sub.form != Subscript::Form::Point; });
        if (!region) return true;
        diags_.report(DiagId::err_whole_tile_operand, e->range, fmt::format("'{}'", brief(*e)), target.name,
                      "is a region (whole tiles only)", shapeString(target.type.shape));
        return false;
    }
    default: return true;  // literals and lists
    }
}

} // namespace tlc::sema

// Statements that stand for others, rewritten before they are checked, so that what they stand
// for is checked, inferred and lowered as if written by hand (and --emit=ast shows it):
//
// - whole-tile assignments: `G_f = silu(G_f) * U_f;` with on-chip tiles of one shape is
//       for (i, j) in parallel(64, 64) { G_f[i, j] = silu(G_f[i, j]) * U_f[i, j]; }
//   the loop an author would otherwise write for each step of an elementwise chain;
// - `argmax(x, idx, dim = 1)` / `argmin`: the value-index reduction as two reductions, the
//   first index of the extreme value along `dim`:
//       let idx_max = alloc_fragment([64], f32);   reduce_max(x, idx_max, dim = 1);
//       let idx_at = alloc_fragment([64, 128], i32);
//       for (i, j) in parallel(64, 128) { idx_at[i, j] = x[i, j] == idx_max[i] ? j : 128; }
//       reduce_min(idx_at, idx, dim = 1);
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

} // namespace

// Loop variables named as people name them, skipping names in scope (which the body may mean).
std::vector<std::string> KernelChecker::freshLoopNames(size_t count) const {
    std::vector<std::string> vars;
    static const char* kNames[] = {"i", "j", "k", "l", "m", "n", "p", "q"};
    for (size_t dim = 0, next = 0; dim < count; ++dim) {
        std::string name;
        do {
            name = next < std::size(kNames) ? kNames[next] : fmt::format("i{}", next);
            ++next;
        } while (scope_.lookup(name));
        vars.push_back(std::move(name));
    }
    return vars;
}

StmtPtr KernelChecker::wholeTileLoop(AssignStmt& s) {
    auto* target = s.target->as<Name>();
    if (!target || !inGrid_ || !parallel_.empty()) return nullptr;
    const Decl* d = scope_.lookup(target->name);
    if (!d || !buffers_.count(d) || !isOnChipTile(*d) || d->type.rank() == 0) return nullptr;
    std::vector<ExprPtr> extents = extentExprs(*d, target->range);
    if (extents.empty()) return nullptr;  // an `auto` shape not known yet: checkAssign says so

    std::vector<std::string> vars = freshLoopNames(d->type.rank());
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

namespace tlc::sema {

StmtPtr KernelChecker::argReduceBlock(ExprStmt& s) {
    auto* call = s.expr->as<Call>();
    if (!call || (call->callee != "argmax" && call->callee != "argmin") || !inGrid_ || !parallel_.empty())
        return nullptr;
    const bool isMax = call->callee == "argmax";
    auto fail = [&] { return std::make_unique<Block>(s.range, std::vector<StmtPtr>{}); };
    if (!bindArgs(*call, *findBuiltin(call->callee))) return fail();
    Expr* operands[3];
    for (int p = 0; p < 3; ++p) operands[p] = const_cast<Expr*>(call->boundArgs[p]);
    static const char* kParams[] = {"src", "dst", "dim"};
    // src and dst: whole on-chip buffers; dst of an integer type.
    const Decl* buffers[2] = {nullptr, nullptr};
    for (int p = 0; p < 2; ++p) {
        if (checkOperand(*operands[p]).isError()) return fail();
        const auto* name = operands[p]->as<Name>();
        const Decl* d = name ? scope_.lookup(name->name) : nullptr;
        if (!d || !buffers_.count(d) || !isOnChipTile(*d) || d->type.rank() == 0 || extentExprs(*d, call->range).empty()) {
            diags_.report(DiagId::err_arg_kind, operands[p]->range, kParams[p], call->callee,
                          "a whole fragment or shared buffer", describe(*operands[p]));
            return fail();
        }
        buffers[p] = d;
    }
    const Decl& src = *buffers[0];
    const Decl& dst = *buffers[1];
    if (!isInteger(dst.type.dtype)) {
        diags_.report(DiagId::err_arg_kind, operands[1]->range, "dst", call->callee, "a buffer of an integer type",
                      describe(*operands[1]));
        return fail();
    }
    int64_t rank = int64_t(src.type.rank()), dim = rank - 1;
    if (operands[2]) {
        Type t = checkValue(*operands[2]);
        std::optional<int64_t> v = operands[2]->constant ? asInt(*operands[2]->constant) : std::nullopt;
        if (t.isError()) return fail();
        if (!v || *v < -rank || *v >= rank) {
            diags_.report(DiagId::err_arg_kind, operands[2]->range, "dim", call->callee,
                          fmt::format("a constant in [{}, {})", -rank, rank), brief(*operands[2]));
            return fail();
        }
        dim = *v < 0 ? *v + rank : *v;
    }
    const bool keptDim = dst.type.rank() == src.type.rank();  // dst keeps the reduced dimension as 1

    // The statements, named after dst.
    SourceRange r = s.range;
    auto fresh = [&](std::string base) {
        std::string name = base;
        for (int n = 2; scope_.lookup(name); ++n) name = fmt::format("{}{}", base, n);
        return name;
    };
    auto nameRef = [&](const std::string& n) { return std::make_unique<Name>(r, n); };
    auto allocation = [&](const std::string& name, std::vector<ExprPtr> extents, DType dtype) {
        std::vector<Arg> args;
        args.push_back(Arg{{}, {}, std::make_unique<List>(r, std::move(extents))});
        args.push_back(Arg{{}, {}, nameRef(std::string(dtypeName(dtype)))});
        return std::make_unique<LetStmt>(r, name, r, std::make_unique<Call>(r, "alloc_fragment", r, std::move(args)));
    };
    auto reduction = [&](const char* op, ExprPtr from, ExprPtr into) {
        std::vector<Arg> args;
        args.push_back(Arg{{}, {}, std::move(from)});
        args.push_back(Arg{{}, {}, std::move(into)});
        args.push_back(Arg{"dim", r, std::make_unique<IntLit>(r, dim)});
        return std::make_unique<ExprStmt>(r, std::make_unique<Call>(r, op, r, std::move(args)));
    };
    const std::string extreme = fresh(dst.name + (isMax ? "_max" : "_min")), at = fresh(dst.name + "_at");
    std::vector<StmtPtr> stmts;
    stmts.push_back(allocation(extreme, extentExprs(dst, r), src.type.dtype));
    stmts.push_back(reduction(isMax ? "reduce_max" : "reduce_min", nameRef(src.name), nameRef(extreme)));
    std::vector<ExprPtr> srcExtents = extentExprs(src, r);
    ExprPtr past = cloneSyntax(*srcExtents[dim]);  // no element has this index
    stmts.push_back(allocation(at, std::move(srcExtents), dst.type.dtype));

    std::vector<std::string> vars = freshLoopNames(size_t(rank));
    // The extreme value of the element's row: dst's shape, the reduced dimension dropped or at 0.
    std::vector<Subscript> rowSubs;
    for (int64_t d = 0; d < rank; ++d) {
        if (d == dim && !keptDim) continue;
        Subscript sub;
        sub.point = d == dim ? ExprPtr(std::make_unique<IntLit>(r, 0)) : nameRef(vars[d]);
        sub.range = r;
        rowSubs.push_back(std::move(sub));
    }
    auto extremeAt = std::make_unique<Index>(r, nameRef(extreme), std::move(rowSubs));
    auto isExtreme = std::make_unique<Binary>(r, BinaryOp::Eq, r, elementAt(nameRef(src.name), vars, r), std::move(extremeAt));
    auto index = std::make_unique<Ternary>(r, std::move(isExtreme), nameRef(vars[dim]), std::move(past));
    std::vector<StmtPtr> body;
    body.push_back(std::make_unique<AssignStmt>(r, elementAt(nameRef(at), vars, r), std::nullopt, std::move(index)));
    std::vector<Arg> extents;
    for (auto& e : extentExprs(src, r)) extents.push_back(Arg{{}, {}, std::move(e)});
    std::vector<LoopVar> loopVars;
    for (const auto& v : vars) loopVars.push_back({v, r, nullptr});
    stmts.push_back(std::make_unique<ForStmt>(r, std::move(loopVars), std::make_unique<Call>(r, "parallel", r, std::move(extents)),
                                              std::make_unique<Block>(r, std::move(body))));
    // The first index that holds the extreme value: the least of the candidates.
    stmts.push_back(reduction("reduce_min", nameRef(at), nameRef(dst.name)));
    return std::make_unique<Block>(r, std::move(stmts));
}

} // namespace tlc::sema

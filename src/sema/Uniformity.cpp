// Which scalars may differ between the threads of a block, for the rule that a `while`
// condition is the same in every thread (its body may hold barriers and tile ops, which every
// thread of the block must reach) and the expert level's rules (ThreadLevel.cpp). Code outside
// `parallel` loops runs in every thread with the same values, except where it reads a fragment
// or local element (each thread holds its own), the thread's position (thread_id(), lane_id(),
// warp_id()) or a shuffle's or warp reduction's result, or a `var` some `parallel` loop assigns
// (each thread keeps its own copy) or that is assigned under a condition that differs.
#include "sema/Checker.h"

#include <fmt/format.h>

namespace tlc::sema {

using namespace ast;

const Expr* KernelChecker::threadVaryingPart(const Expr& e, bool threadLevelOnly) const {
    const Expr* found = nullptr;
    std::function<void(const Expr&)> walk = [&](const Expr& x) {
        if (found) return;
        if (const auto* c = x.as<Call>(); c && c->builtin >= 0) {
            const BuiltinInfo& info = builtinInfo(Builtin(c->builtin));
            bool same = info.id == Builtin::WarpSize || info.id == Builtin::BlockReduceSum ||
                        info.id == Builtin::BlockReduceMax || info.id == Builtin::BlockReduceMin;
            if ((info.kind == BuiltinKind::ThreadPos || info.kind == BuiltinKind::Collective) && !same) {
                found = &x;
                return;
            }
        }
        if (const auto* ix = x.as<Index>()) {
            const Decl* root = rootDecl(*ix->base);
            if (!threadLevelOnly && root && buffers_.count(root) &&
                (root->type.scope == MemScope::Fragment || root->type.scope == MemScope::Local)) {
                found = &x;
                return;
            }
        }
        switch (x.kind) {
        case ExprKind::Index:
            for (const auto& s : x.as<Index>()->subscripts)
                for (const Expr* part : {s.point.get(), s.lo.get(), s.hi.get(), s.length.get()})
                    if (part) walk(*part);
            break;
        case ExprKind::Call:
            for (const auto& a : x.as<Call>()->args) walk(*a.value);
            break;
        case ExprKind::Unary: walk(*x.as<Unary>()->operand); break;
        case ExprKind::Binary:
            walk(*x.as<Binary>()->lhs);
            walk(*x.as<Binary>()->rhs);
            break;
        case ExprKind::Ternary:
            walk(*x.as<Ternary>()->cond);
            walk(*x.as<Ternary>()->thenExpr);
            walk(*x.as<Ternary>()->elseExpr);
            break;
        default: break;
        }
    };
    walk(e);
    return found;
}

std::string KernelChecker::describeVarying(const Expr& part) const {
    if (const auto* c = part.as<Call>())
        return fmt::format("'{}(...)', which differs between threads", c->callee);
    const Decl* root = rootDecl(part);
    return fmt::format("an element of {} buffer '{}', which each thread holds its own part of",
                       scopeName(root->type.scope), root->name);
}

// A `let`, `var` or assignment gives `target` the value `value`.
void KernelChecker::noteScalarWrite(const Decl* target, const Expr& value, SourceRange range) {
    if (!target || varyingSeeds_.count(target)) return;
    if (!parallel_.empty() && target->kind == Decl::Kind::Var) {
        varyingSeeds_[target] = {range, "is assigned inside a 'parallel' loop (each thread keeps its own)"};
        return;
    }
    if (const Expr* part = threadVaryingPart(value)) {
        const Decl* root = part->as<Call>() ? nullptr : rootDecl(*part);
        std::string what = root ? fmt::format("is given an element of {} buffer '{}' (each thread holds its own)",
                                              scopeName(root->type.scope), root->name)
                                : fmt::format("is given {}", describeVarying(*part));
        varyingSeeds_[target] = {part->range, std::move(what), root == nullptr};
        return;
    }
    if (target->kind == Decl::Kind::Var) {
        std::set<const Decl*> deps;
        collectDeps(value, deps);
        // A var assigned where only some threads get is as varied as the condition that decides.
        for (const Control& c : controls_)
            for (const Expr* e : c.exprs) {
                if (const Expr* part = threadVaryingPart(*e)) {
                    varyingSeeds_[target] = {range,
                                             fmt::format("is assigned inside {} whose condition reads {}", c.what,
                                                         describeVarying(*part)),
                                             part->as<Call>() != nullptr};
                    return;
                }
                collectDeps(*e, deps);
            }
        varAssigns_.push_back({target, std::move(deps), range});
    }
}

std::map<const Decl*, KernelChecker::Varying> KernelChecker::varyingDecls(bool threadLevelOnly) const {
    std::map<const Decl*, Varying> varying;
    for (const auto& [decl, why] : varyingSeeds_)
        if (why.threadLevel || !threadLevelOnly) varying[decl] = why;
    auto from = [&](const std::set<const Decl*>& deps) -> const Decl* {
        for (const Decl* d : deps)
            if (varying.count(d)) return d;
        return nullptr;
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (const auto& [decl, deps] : deps_)
            if (const Decl* src = varying.count(decl) ? nullptr : from(deps)) {
                varying[decl] = {decl->range, fmt::format("is computed from '{}'", src->name), varying[src].threadLevel};
                changed = true;
            }
        for (const auto& a : varAssigns_)
            if (const Decl* src = varying.count(a.var) ? nullptr : from(a.deps)) {
                varying[a.var] = {a.range, fmt::format("is assigned from '{}'", src->name), varying[src].threadLevel};
                changed = true;
            }
    }
    return varying;
}

namespace {
constexpr const char* kHowTo =
    "every thread must take the same decision: compute the condition from parameters, grid and loop variables, "
    "'let's and 'var's that no 'parallel' loop assigns, or elements of global tensors and shared buffers";
} // namespace

void KernelChecker::checkWhileConditions() {
    if (whiles_.empty()) return;
    const std::map<const Decl*, Varying> varying = varyingDecls();
    auto from = [&](const std::set<const Decl*>& deps) -> const Decl* {
        for (const Decl* d : deps)
            if (varying.count(d)) return d;
        return nullptr;
    };
    for (const WhileStmt* w : whiles_) {
        if (const Expr* part = threadVaryingPart(*w->cond)) {
            diags_.report(DiagId::err_while_condition_varies, part->range, describeVarying(*part));
            diags_.note(w->cond->range, kHowTo);
            continue;
        }
        std::set<const Decl*> deps;
        collectDeps(*w->cond, deps);
        // The chain from the condition back to its seed, for the notes.
        const Decl* d = from(deps);
        if (!d) continue;
        diags_.report(DiagId::err_while_condition_varies, w->cond->range,
                      fmt::format("'{}', which {}", d->name, varying.at(d).why));
        diags_.note(w->cond->range, kHowTo);
        for (int hops = 0; d && hops < 8; ++hops) {
            const Varying& v = varying.at(d);
            diags_.note(v.where, fmt::format("'{}' {}", d->name, v.why));
            if (varyingSeeds_.count(d)) break;
            const Decl* next = nullptr;
            for (const auto& [decl, deps2] : deps_)
                if (decl == d) next = from(deps2);
            for (const auto& a : varAssigns_)
                if (!next && a.var == d) next = from(a.deps);
            d = next == d ? nullptr : next;
        }
    }
}

} // namespace tlc::sema

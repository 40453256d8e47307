#include "ops/parallel/Parallel.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"
#include "ops/OpUtil.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::ops {

using namespace ir;

std::optional<ParallelNest> parallelNest(const For* outer) {
    ParallelNest nest;
    nest.loc = outer->loc;
    const For* f = outer;
    while (true) {
        const int64_t* min = asConstInt(f->min);
        const int64_t* ext = asConstInt(f->extent);
        if (!min || *min != 0 || !ext) return std::nullopt;
        nest.vars.push_back(f->var);
        nest.extents.push_back(*ext);
        const For* inner = f->body.as<For>();
        if (!inner || inner->forKind != ForKind::Parallel) {
            nest.body = f->body;
            return nest;
        }
        f = inner;
    }
}

namespace {
class AccessCollector : public IRVisitor {
public:
    std::vector<FragmentAccess> accesses;

protected:
    void visitLoad(const Load* n) override {
        if (n->buffer->scope == MemScope::Fragment) accesses.push_back({n->buffer, n->indices, false});
        IRVisitor::visitLoad(n);
    }
    void visitStore(const Store* n) override {
        if (n->buffer->scope == MemScope::Fragment) accesses.push_back({n->buffer, n->indices, true});
        IRVisitor::visitStore(n);
    }
};
} // namespace

std::vector<FragmentAccess> fragmentAccesses(const Stmt& body) {
    AccessCollector c;
    c.visit(body);
    return c.accesses;
}

std::optional<std::vector<size_t>> directDims(const FragmentAccess& a, const ParallelNest& nest) {
    std::vector<size_t> dims;
    for (const auto& idx : a.indices) {
        const Var* v = idx.as<Var>();
        if (!v) return std::nullopt;
        size_t d = 0;
        while (d < nest.vars.size() && nest.vars[d].get() != v) ++d;
        if (d == nest.vars.size() || (!dims.empty() && d <= dims.back())) return std::nullopt;
        dims.push_back(d);
    }
    return dims;
}

std::optional<layout::Fragment> domainOf(const ParallelNest& nest,
                                         const std::map<const BufferNode*, layout::Fragment>& layouts, int64_t threads) {
    auto accesses = fragmentAccesses(nest.body);
    if (accesses.empty()) return std::nullopt;
    // Prefer a fragment of exactly the loop's shape, one the loop writes, then any indexed by
    // all the loop variables (the loop may cover part of it).
    for (bool exact : {true, false})
        for (bool stores : {true, false})
            for (const auto& a : accesses) {
                auto dims = directDims(a, nest);
                if (a.isStore != stores || !dims || dims->size() != nest.vars.size()) continue;
                auto it = layouts.find(a.buffer.get());
                if (it == layouts.end() || (exact && it->second.shape() != nest.extents)) continue;
                return it->second;
            }
    return layout::defaultFragment(nest.extents, threads);
}

namespace {

// Rewrites the loop body for one iteration: fragment accesses become slots of the thread's
// registers, global accesses get bounds checks.
class BodyRewriter : public IRMutator {
public:
    BodyRewriter(LowerContext& ctx, const ParallelNest& nest, std::vector<std::pair<VarPtr, Expr>> binding,
                 VarBounds bounds, Expr writer)
        : ctx_(ctx), nest_(nest), binding_(std::move(binding)), bounds_(std::move(bounds)), writer_(std::move(writer)) {}

    bool failed = false;

protected:
    Expr mutateLoad(const Load* n, const Expr& self) override {
        bool changed = false;
        std::vector<Expr> idx = mutateAll(n->indices, changed);
        if (n->buffer->scope == MemScope::Fragment) return load(ctx_.localBuffer(n->buffer), {slotOf(n->buffer, idx)});
        Expr l = changed ? load(n->buffer, idx, n->lanes) : self;
        if (n->buffer->scope != MemScope::Global) return l;
        // Bounds the enclosing store already checks need no second test.
        Expr ok = boolImm(true);
        for (const Expr& c : conjuncts(inBounds(n->buffer, idx)))
            if (std::none_of(facts_.begin(), facts_.end(), [&](const Expr& f) { return equal(f, c); })) ok = logicalAnd(ok, c);
        ok = simplify(ok, bounds_);
        return asConstInt(ok) && *asConstInt(ok) ? l : select(ok, l, zero(n->dtype));
    }

    Stmt mutateStore(const Store* n, const Stmt& self) override {
        bool changed = false;
        std::vector<Expr> idx = mutateAll(n->indices, changed);
        Expr v = n->buffer->scope == MemScope::Global ? Expr() : mutate(n->value);
        if (n->buffer->scope == MemScope::Fragment)
            return store(ctx_.localBuffer(n->buffer), {slotOf(n->buffer, idx)}, v, n->loc, n->storeKind);
        if (n->buffer->scope != MemScope::Global) {
            Stmt s = store(n->buffer, idx, v, n->loc, n->storeKind);
            // Replicas store the same value, harmlessly, but would each add it.
            if (n->storeKind != StoreKind::AtomicAdd) return s;
            Expr ok = simplify(writer_, bounds_);
            return asConstInt(ok) && *asConstInt(ok) ? s : ifThenElse(ok, s, {}, n->loc);
        }
        Expr inside = inBounds(n->buffer, idx);
        size_t known = facts_.size();
        for (const Expr& c : conjuncts(inside)) facts_.push_back(c);
        v = mutate(n->value);
        facts_.resize(known);
        Stmt s = store(n->buffer, idx, v, n->loc, n->storeKind);
        Expr ok = simplify(logicalAnd(writer_, inside), bounds_);
        return asConstInt(ok) && *asConstInt(ok) ? s : ifThenElse(ok, s, {}, n->loc);
    }

private:
    LowerContext& ctx_;
    const ParallelNest& nest_;
    std::vector<std::pair<VarPtr, Expr>> binding_;
    VarBounds bounds_;
    Expr writer_;
    std::vector<Expr> facts_;  // conditions known to hold where the code being rewritten runs

    static std::vector<Expr> conjuncts(const Expr& e) {
        if (const auto* b = e.as<Binary>(); b && b->op == BinaryOp::And) {
            auto l = conjuncts(b->a), r = conjuncts(b->b);
            l.insert(l.end(), r.begin(), r.end());
            return l;
        }
        if (asConstInt(e) && *asConstInt(e)) return {};
        return {e};
    }

    Expr slotOf(const Buffer& b, const std::vector<Expr>& idx) {
        const auto& f = ctx_.layoutOf(b);
        std::vector<Expr> bound;
        for (const auto& i : idx) bound.push_back(substitute(i, binding_));
        Expr owned = simplify(f.ownedBy(bound, ctx_.tx()), bounds_);
        if (!(asConstInt(owned) && *asConstInt(owned))) {
            std::string where;
            for (size_t d = 0; d < idx.size(); ++d) where += (d ? ", " : "") + printExpr(idx[d]);
            std::string over;
            for (size_t d = 0; d < nest_.vars.size(); ++d) over += (d ? ", " : "") + nest_.vars[d]->name;
            if (!failed) ctx_.diags.report(DiagId::err_fragment_elsewhere, SourceRange(nest_.loc), b->name, where, over);
            failed = true;
        }
        return simplify(f.localOf(bound), bounds_);
    }
};

} // namespace

Stmt lowerParallel(LowerContext& ctx, const ParallelNest& nest) {
    std::optional<layout::Fragment> domain = domainOf(nest, ctx.layouts, ctx.threads);
    std::vector<std::string> names;
    for (const auto& v : nest.vars) names.push_back(v->name);

    if (!domain) {
        return distributedLoop(
            ctx, nest.extents, 1, names,
            [&](const std::vector<Expr>&) {
                BodyRewriter rewriter(ctx, nest, {}, ctx.bounds(), boolImm(true));
                return rewriter.mutate(nest.body);
            },
            nest.vars);
    }
    const layout::Fragment& D = *domain;
    // A loop over part of its domain fragment runs the iterations inside the loop's range.
    Expr inRange = boolImm(true);
    for (size_t d = 0; d < nest.extents.size(); ++d) {
        if (D.shape()[d] < nest.extents[d]) {
            ctx.diags.report(DiagId::err_not_lowerable, SourceRange(nest.loc), "this parallel loop",
                             fmt::format("it runs past the end of the fragment it works on (extent {} > {})",
                                         nest.extents[d], D.shape()[d]));
            return seq({});
        }
        if (D.shape()[d] > nest.extents[d]) inRange = logicalAnd(inRange, Expr(nest.vars[d]) < nest.extents[d]);
    }
    VarPtr slotVar = ctx.freshVar("l");
    std::vector<Expr> values = D.indicesAt(ctx.tx(), Expr(slotVar));
    VarBounds bounds = ctx.bounds();
    bounds.push_back({slotVar.get(), Interval{0, D.locals() - 1}});
    std::vector<std::pair<VarPtr, Expr>> binding;
    for (size_t d = 0; d < nest.vars.size(); ++d) binding.push_back({nest.vars[d], simplify(values[d], bounds)});
    // Replicas run the same iterations; one of them writes global memory.
    Expr writer = D.replicas() > 1 ? binary(BinaryOp::Eq, D.replicaOf(ctx.tx()), intImm(0)) : boolImm(true);
    BodyRewriter rewriter(ctx, nest, binding, bounds, writer);
    Stmt body = rewriter.mutate(nest.body);
    if (!(asConstInt(inRange) && *asConstInt(inRange))) body = ifThenElse(inRange, body, {}, nest.loc);
    for (size_t d = nest.vars.size(); d-- > 0;) body = letStmt(nest.vars[d], binding[d].second, body, nest.loc);
    Stmt loop = forLoop(slotVar, intImm(0), intImm(D.locals()), ctx.slotLoopKind(), body, nest.loc);
    return simplify(loop, ctx.bounds());
}

} // namespace tlc::ops

#include "ops/parallel/Parallel.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"
#include "ops/OpUtil.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

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

namespace {
// Whether a statement reads or writes a per-thread array (local or fragment) at an index that
// is not a constant: such arrays live in registers only when every index is known after
// unrolling, so a loop around the access must be unrolled whole.
class VariableRegisterIndex : public IRVisitor {
public:
    bool found = false;

protected:
    void visitLoad(const Load* n) override {
        check(n->buffer, n->indices);
        IRVisitor::visitLoad(n);
    }
    void visitStore(const Store* n) override {
        check(n->buffer, n->indices);
        IRVisitor::visitStore(n);
    }

private:
    void check(const Buffer& b, const std::vector<Expr>& indices) {
        if (b->scope != MemScope::Local && b->scope != MemScope::Fragment) return;
        for (const Expr& i : indices) found |= !asConstInt(i);
    }
};

bool indexesRegistersByVariable(const Stmt& body) {
    VariableRegisterIndex v;
    v.visit(body);
    return v.found;
}
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

namespace {
// Variables whose value depends on the iteration: the loop's own and lets of them in the body.
class DependentVars : public IRVisitor {
public:
    std::set<const Var*> vars;
    bool mentions(const Expr& e) {
        found_ = false;
        probing_ = true;
        visit(e);
        probing_ = false;
        return found_;
    }

protected:
    void visitVar(const Var* n) override { found_ |= probing_ && vars.count(n); }
    void visitLoad(const Load* n) override {
        // A per-thread variable (`var s`) may hold anything the iteration computed.
        found_ |= probing_ && n->buffer->scope == MemScope::Local;
        IRVisitor::visitLoad(n);
    }
    void visitLetStmt(const LetStmt* n) override {
        if (!probing_ && mentions(n->value)) vars.insert(n->var.get());
        IRVisitor::visitLetStmt(n);
    }

private:
    bool found_ = false, probing_ = false;
};
} // namespace

std::vector<IndexUse> indexUses(const FragmentAccess& a, const ParallelNest& nest) {
    DependentVars dep;
    for (const auto& v : nest.vars) dep.vars.insert(v.get());
    dep.visit(nest.body);
    auto loopDim = [&](const Expr& e) -> std::optional<size_t> {
        const Var* v = e.as<Var>();
        for (size_t d = 0; v && d < nest.vars.size(); ++d)
            if (nest.vars[d].get() == v) return d;
        return std::nullopt;
    };
    std::vector<IndexUse> uses;
    for (const auto& idx : a.indices) {
        IndexUse u;
        if (auto d = loopDim(idx)) {
            u = {IndexUse::Kind::Loop, *d, 1};
        } else if (const auto* b = idx.as<Binary>(); b && b->op == BinaryOp::Div && loopDim(b->a) && asConstInt(b->b) &&
                                                    *asConstInt(b->b) > 0) {
            u = {IndexUse::Kind::Loop, *loopDim(b->a), *asConstInt(b->b)};
        } else if (!dep.mentions(idx)) {
            u.kind = IndexUse::Kind::Free;
        }
        uses.push_back(u);
    }
    return uses;
}

std::optional<layout::Fragment> layoutForAccess(const FragmentAccess& a, const ParallelNest& nest,
                                                const layout::Fragment& domain) {
    std::vector<int64_t> shape;
    if (!constantShape(a.buffer, shape)) return std::nullopt;
    std::vector<IndexUse> uses = indexUses(a, nest);
    std::vector<std::optional<size_t>> from;
    std::optional<size_t> last;
    layout::Fragment f = domain;
    for (size_t d = 0; d < uses.size(); ++d) {
        const IndexUse& u = uses[d];
        if (u.kind == IndexUse::Kind::Other) return std::nullopt;
        if (u.kind == IndexUse::Kind::Free) {
            from.push_back(std::nullopt);
            continue;
        }
        if (last && u.dim <= *last) return std::nullopt;
        last = u.dim;
        if (u.divisor != 1) {
            auto div = f.divided(u.dim, u.divisor);
            if (!div) return std::nullopt;
            f = *div;
        }
        if (f.shape()[u.dim] != shape[d]) return std::nullopt;
        from.push_back(u.dim);
    }
    return f.widen(shape, from);
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
    // Fragments the loop writes at elements their iterations' threads may not hold: the loop
    // works on their shared copies (spillable() says which can), lowerParallel moves them there
    // and back.
    std::set<const BufferNode*> spilled;

protected:
    Expr mutateLoad(const Load* n, const Expr& self) override {
        bool changed = false;
        std::vector<Expr> idx = mutateAll(n->indices, changed);
        if (spilled.count(n->buffer.get())) return load(ctx_.exchangeBuffer(n->buffer), {flatIndex(n->buffer, idx)});
        if (n->buffer->scope == MemScope::Fragment) {
            if (auto slot = slotOf(n->buffer, idx, false)) return load(ctx_.localBuffer(n->buffer), {*slot});
            if (writes(n->buffer)) {
                if (!failed)
                    ctx_.diags.report(DiagId::err_fragment_read_written, SourceRange(nest_.loc), n->buffer->name,
                                      indexText(idx), loopVars());
                failed = true;
            }
            return load(stagedCopy(n->buffer, idx), {flatIndex(n->buffer, idx)});
        }
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
        const bool spill = spilled.count(n->buffer.get()) > 0;  // the fragment's shared copy
        if (n->buffer->scope == MemScope::Fragment && !spill)
            return store(ctx_.localBuffer(n->buffer), {*slotOf(n->buffer, idx, true)}, v, n->loc, n->storeKind);
        if (n->buffer->scope != MemScope::Global) {
            Stmt s = spill ? store(ctx_.exchangeBuffer(n->buffer), {flatIndex(n->buffer, idx)}, v, n->loc, n->storeKind)
                           : store(n->buffer, idx, v, n->loc, n->storeKind);
            if (n->buffer->scope == MemScope::Local) return s;  // each thread's own
            // Shared memory: one replica writes. Each storing would race, and an update in place
            // (`sh[i, j] += v[j]`) could read another replica's result and add twice.
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

public:
    // Fragments this loop reads elements of that other threads hold: each one's copy in shared
    // memory, in the order first read, with the first such access (for --explain).
    struct Staged {
        Buffer fragment, shared;
        std::string access;
    };
    std::vector<Staged> staged;

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

    bool writes(const Buffer& b) const {
        for (const auto& a : fragmentAccesses(nest_.body))
            if (a.isStore && a.buffer == b) return true;
        return false;
    }
    std::string loopVars() const {
        std::string over;
        for (size_t d = 0; d < nest_.vars.size(); ++d) over += (d ? ", " : "") + nest_.vars[d]->name;
        return over;
    }

    static std::string indexText(const std::vector<Expr>& idx) {
        std::string where;
        for (size_t d = 0; d < idx.size(); ++d) where += (d ? ", " : "") + printExpr(idx[d]);
        return where;
    }

    // The register slot of b[idx] in the thread running the iteration; nullopt for a read of an
    // element another thread may hold (the caller reads the staged copy). A write there is an
    // error: its owner would never see it.
    std::optional<Expr> slotOf(const Buffer& b, const std::vector<Expr>& idx, bool isStore) {
        const auto& f = ctx_.layoutOf(b);
        std::vector<Expr> bound;
        for (const auto& i : idx) bound.push_back(substitute(i, binding_));
        Expr owned = simplify(f.ownedBy(bound, ctx_.tx()), bounds_);
        if (!(asConstInt(owned) && *asConstInt(owned))) {
            if (!isStore) return std::nullopt;
            if (!failed) ctx_.diags.report(DiagId::err_fragment_elsewhere, SourceRange(nest_.loc), b->name, indexText(idx), loopVars());
            failed = true;
        }
        return simplify(f.localOf(bound), bounds_);
    }

public:
    // Whether every write of `b` in the loop is held by the thread running its iteration.
    bool writesOwned(const Buffer& b) {
        for (const auto& a : fragmentAccesses(nest_.body)) {
            if (!a.isStore || a.buffer != b) continue;
            std::vector<Expr> bound;
            for (const auto& i : a.indices) bound.push_back(substitute(i, binding_));
            Expr owned = simplify(ctx_.layoutOf(b).ownedBy(bound, ctx_.tx()), bounds_);
            if (!(asConstInt(owned) && *asConstInt(owned))) return false;
        }
        return true;
    }
    // A fragment written where another thread may hold the element can move to shared memory
    // for the loop when no iteration touches what another one writes: every access has the same
    // indices, and each of the loop's variables is one of them (acc[i, 0] in a loop over i).
    bool spillable(const Buffer& b) const {
        std::optional<std::vector<std::string>> first;
        for (const auto& a : fragmentAccesses(nest_.body)) {
            if (a.buffer != b) continue;
            std::vector<std::string> text;
            for (const auto& i : a.indices) text.push_back(printExpr(i));
            if (first && *first != text) return false;
            first = text;
        }
        if (!first) return false;
        for (const auto& v : nest_.vars)
            if (std::find(first->begin(), first->end(), v->name) == first->end()) return false;
        return true;
    }

private:
    Buffer stagedCopy(const Buffer& b, const std::vector<Expr>& idx) {
        for (const auto& s : staged)
            if (s.fragment == b) return s.shared;
        staged.push_back({b, ctx_.exchangeBuffer(b), b->name + "[" + indexText(idx) + "]"});
        return staged.back().shared;
    }
};

} // namespace

Stmt lowerParallel(LowerContext& ctx, const ParallelNest& nest) {
    std::optional<layout::Fragment> domain = domainOf(nest, ctx.layouts, ctx.threads);
    std::vector<std::string> names;
    for (const auto& v : nest.vars) names.push_back(v->name);

    if (!domain) {
        // No fragment: unless the body indexes a per-thread array by the loop (alloc_local),
        // nothing needs the iterations' indices as constants, and the loop is left rolled for
        // nvcc to unroll as it sees fit. Unrolled whole, retention_fwd's `q = Q * scale` (32
        // predicated global loads a thread) had every load hoisted ahead of its store, and with
        // the kernel's three accumulators live spilled 308 bytes on sm_90a.
        return distributedLoop(
            ctx, nest.extents, 1, names,
            [&](const std::vector<Expr>&) {
                BodyRewriter rewriter(ctx, nest, {}, ctx.bounds(), boolImm(true));
                return rewriter.mutate(nest.body);
            },
            nest.vars, !indexesRegistersByVariable(nest.body));
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
    // On the cpu a loop over a whole tile is a nest over the loop's own variables (vectorised by
    // the C++ compiler); elsewhere one loop over the thread's slots gives each variable its value.
    const bool nested = isCpuTile(ctx, D) && asConstInt(inRange) && *asConstInt(inRange);
    VarPtr slotVar = ctx.freshVar("l");
    std::vector<Expr> values = D.indicesAt(ctx.tx(), Expr(slotVar));
    VarBounds bounds = ctx.bounds();
    bounds.push_back({slotVar.get(), Interval{0, D.locals() - 1}});
    std::vector<std::pair<VarPtr, Expr>> binding;
    for (size_t d = 0; d < nest.vars.size(); ++d) {
        if (nested) bounds.push_back({nest.vars[d].get(), Interval{0, nest.extents[d] - 1}});
        binding.push_back({nest.vars[d], nested ? Expr(nest.vars[d]) : simplify(values[d], bounds)});
    }
    // Replicas run the same iterations; one of them writes global memory.
    Expr writer = D.replicas() > 1 ? binary(BinaryOp::Eq, D.replicaOf(ctx.tx()), intImm(0)) : boolImm(true);
    BodyRewriter rewriter(ctx, nest, binding, bounds, writer);
    std::vector<Buffer> spilled;  // in order of first access
    for (const auto& a : fragmentAccesses(nest.body))
        if (a.isStore && std::find(spilled.begin(), spilled.end(), a.buffer) == spilled.end() &&
            !rewriter.writesOwned(a.buffer) && rewriter.spillable(a.buffer)) {
            spilled.push_back(a.buffer);
            rewriter.spilled.insert(a.buffer.get());
        }
    Stmt body = rewriter.mutate(nest.body);
    // A store of neighbouring columns into a tensor: a vector a group of slots (VectorStores.cpp).
    std::optional<Stmt> grouped;
    if (!nested && spilled.empty() && !rewriter.failed)
        grouped = lowerVectorStores(ctx, nest, {D, slotVar, binding, bounds, writer, inRange, body});
    Stmt loop = grouped ? *grouped : body;
    if (!grouped) {
        if (!(asConstInt(inRange) && *asConstInt(inRange))) loop = ifThenElse(inRange, loop, {}, nest.loc);
        for (size_t d = nest.vars.size(); d-- > 0;)
            loop = nested ? forLoop(nest.vars[d], intImm(0), intImm(nest.extents[d]), ctx.slotLoopKind(), loop, nest.loc)
                          : letStmt(nest.vars[d], binding[d].second, loop, nest.loc);
        if (!nested) loop = forLoop(slotVar, intImm(0), intImm(D.locals()), ctx.slotLoopKind(), loop, nest.loc);
        loop = simplify(loop, ctx.bounds());
    }
    if (spilled.empty() && rewriter.staged.empty()) return loop;
    // Fragments the loop writes at other threads' elements (spilled) or reads there (staged) go
    // through shared memory first. A staged one the loop does not write
    // (err_fragment_read_written), so every order of the iterations reads the same values.
    std::string over;
    for (size_t d = 0; d < nest.vars.size(); ++d) over += (d ? ", " : "") + nest.vars[d]->name;
    std::vector<Stmt> steps;
    for (const Buffer& f : spilled) {
        const Buffer shared = ctx.exchangeBuffer(f);
        ctx.decide(fmt::format("writes of {} in the parallel loop over {}", f->name, over),
                   fmt::format("through shared memory ({}[{}])", shared->name, printExpr(shared->shape[0])), "lowering",
                   fmt::format("the loop writes elements of '{}' that another thread than the one running the "
                               "iteration may hold (the loop runs as {} {} is {}): the fragment goes to shared "
                               "memory, the loop works there, and each thread loads its elements back",
                               f->name, D.str(), f->name, ctx.layoutOf(f).str()),
                   nest.loc);
        steps.push_back(stageToShared(ctx, f, shared, nest.loc));
    }
    for (const auto& s : rewriter.staged) {
        const layout::Fragment& F = ctx.layoutOf(s.fragment);
        ctx.decide(fmt::format("reads of {} in the parallel loop over {}", s.fragment->name, over),
                   fmt::format("through shared memory ({}[{}])", s.shared->name, printExpr(s.shared->shape[0])), "lowering",
                   fmt::format("'{}' may be held by another thread than the one running the iteration (the loop runs as "
                               "{} {} is {}): each thread stores the elements it holds, and after a barrier the loop reads "
                               "them from there",
                               s.access, D.str(), s.fragment->name, F.str()),
                   nest.loc);
        steps.push_back(stageToShared(ctx, s.fragment, s.shared, nest.loc));
    }
    steps.push_back(loop);
    if (!spilled.empty()) {
        steps.push_back(barrier(nest.loc));
        for (const Buffer& f : spilled) steps.push_back(loadFromShared(ctx, f, ctx.exchangeBuffer(f)));
        steps.push_back(barrier(nest.loc));
    }
    return seq(steps, nest.loc);
}

Expr flatIndex(const Buffer& b, const std::vector<Expr>& idx) {
    Expr flat;
    for (size_t d = 0; d < idx.size(); ++d) flat = flat ? flat * b->shape[d] + idx[d] : idx[d];
    return flat ? flat : intImm(0);
}

namespace {
// The row-major offset in `fragment`'s shared copy of the element a layout index names (a full
// reduction's result is laid out without the buffer's unit dimensions).
Expr sharedOffset(const Buffer& fragment, std::vector<Expr> idx) {
    while (idx.size() < fragment->shape.size()) idx.insert(idx.begin(), intImm(0));
    return flatIndex(fragment, idx);
}
} // namespace

Stmt loadFromShared(LowerContext& ctx, const Buffer& fragment, const Buffer& shared) {
    const layout::Fragment& F = ctx.layoutOf(fragment);
    Buffer local = ctx.localBuffer(fragment);
    return fragmentLoop(ctx, F, 1, indexNames(F.rank()), [&](const Expr& slot, const std::vector<Expr>& idx) {
        return store(local, {slot}, load(shared, {sharedOffset(fragment, idx)}));
    });
}

Stmt stageToShared(LowerContext& ctx, const Buffer& fragment, const Buffer& shared, SourceLoc loc) {
    const layout::Fragment& F = ctx.layoutOf(fragment);
    Buffer local = ctx.localBuffer(fragment);
    Expr writer = F.replicas() > 1 ? binary(BinaryOp::Eq, F.replicaOf(ctx.tx()), intImm(0)) : boolImm(true);
    Stmt fill = fragmentLoop(ctx, F, 1, indexNames(F.rank()), [&](const Expr& slot, const std::vector<Expr>& idx) {
        Stmt st = store(shared, {sharedOffset(fragment, idx)}, load(local, {slot}));
        Expr cond = simplify(writer, ctx.bounds());
        return asConstInt(cond) && *asConstInt(cond) ? st : ifThenElse(cond, st);
    });
    return seq({barrier(loc), fill, barrier(loc)}, loc);
}

} // namespace tlc::ops

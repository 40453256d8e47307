// Tile ops become thread-level code (each op lowers itself, see src/ops/), parallel loops
// follow their domain layout, pipelined loops that pipeline-loops left alone (targets without
// cp.async) become plain loops, and fragments become per-thread arrays.
#include "passes/Passes.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "ops/OpUtil.h"
#include "ops/parallel/Parallel.h"
#include "passes/SharedLiveness.h"

#include <fmt/format.h>

#include <set>

namespace tlc {

using namespace ir;

namespace {

class Lowerer : public IRMutator {
public:
    Lowerer(LowerContext& ctx, std::map<const StmtNode*, int64_t> headroom) : ctx_(ctx), headroom_(std::move(headroom)) {}

protected:
    Stmt mutateTileOpStmt(const TileOpStmt* n, const Stmt&) override {
        auto it = headroom_.find(n);
        ctx_.sharedHeadroom = it == headroom_.end() ? 0 : it->second;
        return n->op->lower(ctx_, n->loc);
    }

    Stmt mutateFor(const For* n, const Stmt& self) override {
        if (n->forKind == ForKind::Parallel) {
            auto nest = ops::parallelNest(n);
            if (!nest) {
                ctx_.diags.report(DiagId::err_not_lowerable, SourceRange(n->loc), "this parallel loop",
                                  "its extents must be compile-time constants");
                return self;
            }
            return ops::lowerParallel(ctx_, *nest);
        }
        size_t mark = reads_.size();
        Expr min = mutate(n->min), extent = mutate(n->extent);
        Stmt body = mutate(n->body);
        ForKind kind = n->forKind == ForKind::Pipelined ? ForKind::Serial : n->forKind;
        return broadcastReads(forLoop(n->var, min, extent, kind, body, n->loc, {}, n->step), mark, n->loc);
    }

    Stmt mutateAllocate(const Allocate* n, const Stmt& self) override {
        Stmt body = mutate(n->body);
        if (n->buffer->scope == MemScope::Fragment) return allocate(ctx_.localBuffer(n->buffer), body, n->loc, n->init);
        return body.same(n->body) ? self : allocate(n->buffer, body, n->loc, n->init);
    }

    // Outside parallel loops every thread runs the code: a fragment element is read from the
    // thread's own registers when every thread holds the fragment (inference replicates those
    // it can), else through shared memory; a store goes to the threads that hold the element.
    Stmt mutateStore(const Store* n, const Stmt& self) override {
        size_t mark = reads_.size();
        if (n->buffer->scope == MemScope::Global) {
            // Thread-level element stores (parallel loops are lowered on their own): past a
            // tensor's end they are dropped, as in parallel loops.
            Stmt st = IRMutator::mutateStore(n, self);
            const auto* stored = st.as<Store>();
            Expr ok = simplify(ops::inBounds(n->buffer, stored ? stored->indices : n->indices), ctx_.bounds());
            if (!(asConstInt(ok) && *asConstInt(ok))) st = ifThenElse(ok, st, {}, n->loc);
            return broadcastReads(st, mark, n->loc);
        }
        if (n->buffer->scope != MemScope::Fragment) return broadcastReads(IRMutator::mutateStore(n, self), mark, n->loc);
        bool changed = false;
        std::vector<Expr> idx = mutateAll(n->indices, changed);
        Expr v = mutate(n->value);
        const layout::Fragment& f = ctx_.layoutOf(n->buffer);
        Stmt st = store(ctx_.localBuffer(n->buffer), {simplify(f.localOf(idx), ctx_.bounds())}, v, n->loc, n->storeKind);
        Expr owned = simplify(f.ownedBy(idx, ctx_.tx()), ctx_.bounds());
        if (!(asConstInt(owned) && *asConstInt(owned))) st = ifThenElse(owned, st, {}, n->loc);
        return broadcastReads(st, mark, n->loc);
    }

    Expr mutateLoad(const Load* n, const Expr& self) override {
        if (n->buffer->scope == MemScope::Global) {
            // Past a tensor's end the value is zero here too, as in parallel loops (a block's
            // rows past the last, read as scalars: layernorm's Mean[row]).
            Expr l = IRMutator::mutateLoad(n, self);
            const auto* loaded = l.as<Load>();
            Expr ok = simplify(ops::inBounds(n->buffer, loaded ? loaded->indices : n->indices, n->lanes), ctx_.bounds());
            return asConstInt(ok) && *asConstInt(ok) ? l : select(ok, l, zero(n->dtype, n->lanes));
        }
        if (n->buffer->scope != MemScope::Fragment) return IRMutator::mutateLoad(n, self);
        bool changed = false;
        std::vector<Expr> idx = mutateAll(n->indices, changed);
        const layout::Fragment& f = ctx_.layoutOf(n->buffer);
        if (f.isReplicated()) return load(ctx_.localBuffer(n->buffer), {simplify(f.localOf(idx), ctx_.bounds())});
        VarPtr v = ctx_.freshVar(n->buffer->name + "_v", n->dtype);
        reads_.push_back({v, n->buffer, idx});
        return Expr(v);
    }

    Stmt mutateEvaluate(const Evaluate* n, const Stmt& self) override {
        size_t mark = reads_.size();
        return broadcastReads(IRMutator::mutateEvaluate(n, self), mark, n->loc);
    }
    Stmt mutateLetStmt(const LetStmt* n, const Stmt& self) override {
        size_t mark = reads_.size();
        Expr value = mutate(n->value);
        Stmt body = mutate(n->body);
        Stmt st = value.same(n->value) && body.same(n->body) ? self : letStmt(n->var, value, body, n->loc);
        return broadcastReads(st, mark, n->loc);
    }
    Stmt mutateIfThenElse(const IfThenElse* n, const Stmt& self) override {
        size_t mark = reads_.size();
        return broadcastReads(IRMutator::mutateIfThenElse(n, self), mark, n->loc);
    }

private:
    LowerContext& ctx_;
    std::map<const StmtNode*, int64_t> headroom_;
    // Elements of fragments spread over threads read outside parallel loops, by the statement
    // being rewritten (nested statements take theirs first): each becomes a variable.
    struct Read {
        VarPtr var;
        Buffer fragment;
        std::vector<Expr> indices;
    };
    std::vector<Read> reads_;

    // Binds the reads recorded since `mark` before `st`: the fragments go through shared
    // memory (every thread stores what it holds), and every thread reads the elements there.
    Stmt broadcastReads(Stmt st, size_t mark, SourceLoc loc) {
        if (reads_.size() == mark) return st;
        std::vector<Read> mine(reads_.begin() + static_cast<std::ptrdiff_t>(mark), reads_.end());
        reads_.resize(mark);
        std::map<const BufferNode*, Buffer> shared;
        std::vector<Stmt> steps;
        for (const Read& r : mine) {
            if (shared.count(r.fragment.get())) continue;
            Buffer s = ctx_.exchangeBuffer(r.fragment);
            shared[r.fragment.get()] = s;
            ctx_.decide(fmt::format("reads of {} outside parallel loops", r.fragment->name),
                        fmt::format("through shared memory ({}[{}])", s->name, printExpr(s->shape[0])), "lowering",
                        fmt::format("every thread reads it, and {} is spread over the threads ({}): each thread stores "
                                    "the elements it holds, and after a barrier every thread reads them from there",
                                    r.fragment->name, ctx_.layoutOf(r.fragment).str()),
                        loc);
            steps.push_back(ops::stageToShared(ctx_, r.fragment, s, loc));
        }
        for (size_t i = mine.size(); i-- > 0;)
            st = letStmt(mine[i].var, load(shared[mine[i].fragment.get()], {ops::flatIndex(mine[i].fragment, mine[i].indices)}),
                         st, loc);
        steps.push_back(st);
        return seq(steps, loc);
    }
};

} // namespace

Stmt lowerTileOps(const Stmt& body, LowerContext& ctx) { return Lowerer(ctx, sharedHeadroom(body, ctx)).mutate(body); }

} // namespace tlc

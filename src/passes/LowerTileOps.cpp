// Tile ops become thread-level code (each op lowers itself, see src/ops/), parallel loops
// follow their domain layout, pipelined loops that pipeline-loops left alone (targets without
// cp.async) become plain loops, and fragments become per-thread arrays.
#include "passes/Passes.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "ops/Op.h"
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
        return ops::asOp(*n->op).lower(ctx_, n->loc);
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
        if (n->forKind == ForKind::Vectorized)
            if (Stmt moved = vectorMove(n); moved) return moved;
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

    // The address of a global element (split-K's arrival counter, passes/SplitK.cpp) reads
    // nothing: no guard for past the end, which would leave no element to take the address of.
    Expr mutateCall(const Call* n, const Expr& self) override {
        const auto* l = n->name == "address_of" && n->args.size() == 1 ? n->args[0].as<Load>() : nullptr;
        if (!l || l->buffer->scope != MemScope::Global) return IRMutator::mutateCall(n, self);
        bool changed = false;
        std::vector<Expr> idx = mutateAll(l->indices, changed);
        return call("address_of", n->dtype, {load(l->buffer, idx, l->lanes)});
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
        lets_.emplace_back(n->var, n->value);
        Stmt body = mutate(n->body);
        lets_.pop_back();
        Stmt st = value.same(n->value) && body.same(n->body) ? self : letStmt(n->var, value, body, n->loc);
        return broadcastReads(st, mark, n->loc);
    }
    Stmt mutateIfThenElse(const IfThenElse* n, const Stmt& self) override {
        size_t mark = reads_.size();
        return broadcastReads(IRMutator::mutateIfThenElse(n, self), mark, n->loc);
    }

private:
    // `for v in vectorized(n) { L[c + v] = G[..., b + v]; }` (or the other way round) between a
    // per-thread array and a global tensor, as one vector move of n elements when the target
    // vectorises global accesses and the move is 4, 8 or 16 bytes: the tensor's rows are checked
    // at launch to start on vector boundaries (vectorWidthFor), b and c must be known multiples
    // of n, and past the tensor's end the whole vector reads as zero or is not written (the
    // launch check makes vectors end where rows do). Null: the loop stays element by element.
    Stmt vectorMove(const For* n) {
        const int64_t* lanes = asConstInt(n->extent);
        Stmt only = n->body;
        while (const auto* q = only.as<Seq>()) {
            if (q->stmts.size() != 1) return {};
            only = q->stmts[0];
        }
        const auto* st = only.as<Store>();
        const auto* ld = st ? st->value.as<Load>() : nullptr;
        const int64_t* from = asConstInt(n->min);
        if (!lanes || !from || *from != 0 || !st || !ld || st->storeKind != StoreKind::Plain || ld->lanes != 1 ||
            ld->dtype != st->buffer->dtype || ld->buffer->dtype != st->buffer->dtype)
            return {};
        const bool loading = ld->buffer->scope == MemScope::Global && st->buffer->scope == MemScope::Local;
        const bool storing = st->buffer->scope == MemScope::Global && ld->buffer->scope == MemScope::Local;
        if (!loading && !storing) return {};
        const Buffer& global = loading ? ld->buffer : st->buffer;
        const Buffer& local = loading ? st->buffer : ld->buffer;
        const std::vector<Expr>& globalIdx = loading ? ld->indices : st->indices;
        const std::vector<Expr>& localIdx = loading ? st->indices : ld->indices;
        int64_t bytes = *lanes * dtypeBits(global->dtype) / 8;
        if (dtypeBits(global->dtype) < 8 || (bytes != 4 && bytes != 8 && bytes != 16) || globalIdx.empty() ||
            localIdx.empty())
            return {};
        // Every index but the last free of v; the last ones v plus a start (a multiple of n).
        const Var* v = n->var.get();
        auto startOf = [&](const std::vector<Expr>& idx) -> Expr {
            for (size_t d = 0; d + 1 < idx.size(); ++d)
                if (uses(idx[d], v)) return {};
            Expr start = ops::startAlong(idx.back(), v);
            if (!start || knownMultiple(withLets(start)) % *lanes != 0) return {};
            return start;
        };
        Expr globalStart = startOf(globalIdx), localStart = startOf(localIdx);
        if (!globalStart || !localStart) return {};
        // vectorWidthFor sees the start through the lets (k0 = ko * 256 + kr * 8 is a multiple of 8).
        Region r{global, globalIdx, std::vector<int64_t>(globalIdx.size(), 1)};
        r.starts.back() = withLets(globalStart);
        r.extents.back() = *lanes;
        if (ops::vectorWidthFor(ctx_, r, *lanes, global->dtype) != *lanes) return {};
        std::vector<Expr> g = globalIdx, l = localIdx;
        g.back() = globalStart;
        l.back() = localStart;
        Expr valid = simplify(ops::inBounds(global, g, *lanes), ctx_.bounds());
        ctx_.decide(fmt::format("vectorized loop over '{}'", n->var->name),
                    fmt::format("{}-byte vector {}s of {}", bytes, loading ? "load" : "store", global->name), "lowering",
                    fmt::format("{} consecutive elements between {} and per-thread {}, starting on a multiple of {}", *lanes,
                                global->name, local->name, *lanes),
                    n->loc);
        Stmt move = loading ? store(local, l, load(global, g, int(*lanes)), st->loc)
                            : store(global, g, load(local, l, int(*lanes)), st->loc);
        if (asConstInt(valid) && *asConstInt(valid)) return move;
        Stmt zero = loading ? store(local, l, ir::zero(local->dtype, int(*lanes)), st->loc) : Stmt();
        return ifThenElse(valid, move, zero, n->loc);
    }

    // `e` with the enclosing lets' values in place of their variables (innermost first), for
    // what the simplifier can tell of it (knownMultiple).
    Expr withLets(Expr e) const {
        for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) e = substitute(e, {*it});
        return simplify(e);
    }

    LowerContext& ctx_;
    std::map<const StmtNode*, int64_t> headroom_;
    std::vector<std::pair<VarPtr, Expr>> lets_;  // the lets around the statement being lowered
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

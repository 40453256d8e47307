// serialize-threads (the CPU target): the block's threads as loops.
//
// The CPU runs one thread per block: tile ops are lowered for one thread and the block's code
// runs once. Thread-level code (what mentions the thread index) runs for every thread of the
// block instead, as loops `for (thread = 0; thread < threads; ++thread)` around the longest stretches
// that hold no synchronisation point, as POCL forms work-item loops:
//
//   - barriers (sync_threads), sync_warp, tile ops and tile-level loops end a stretch;
//   - a collective `let v = shfl_xor(x, m, w)` becomes a stretch that writes every thread's x
//     into an exchange array, the end of the stretch, and a stretch that reads the partner's
//     entry (a warp reduction reads its group's entries);
//   - what lives across the end of a stretch and differs between threads becomes an array
//     with one entry per thread: a `let` of a thread-dependent value, a `var`, an
//     `alloc_local` buffer written by thread-level code;
//   - control flow around a synchronisation point has the same condition in every thread
//     (sema checks it), so it stays outside the loops and the stretches inside it are split.
#include "passes/Passes.h"
#include "passes/ThreadDependence.h"

#include "ir/Visitor.h"

#include <fmt/format.h>

#include <set>

namespace tlc {

using namespace ir;

namespace {

// Gives a per-thread buffer a leading dimension of `threads`, indexed by the thread index.
class Expand : public IRMutator {
public:
    Expand(const BufferNode* from, Buffer to, Expr tx) : from_(from), to_(std::move(to)), tx_(std::move(tx)) {}

protected:
    Expr mutateLoad(const Load* n, const Expr& self) override {
        Expr e = IRMutator::mutateLoad(n, self);
        const Load* l = e.as<Load>();
        if (l->buffer.get() != from_) return e;
        std::vector<Expr> idx = {tx_};
        idx.insert(idx.end(), l->indices.begin(), l->indices.end());
        return load(to_, idx, l->lanes);
    }
    Stmt mutateStore(const Store* n, const Stmt& self) override {
        Stmt s = IRMutator::mutateStore(n, self);
        const Store* st = s.as<Store>();
        if (st->buffer.get() != from_) return s;
        std::vector<Expr> idx = {tx_};
        idx.insert(idx.end(), st->indices.begin(), st->indices.end());
        return store(to_, idx, st->value, st->loc, st->storeKind);
    }

private:
    const BufferNode* from_;
    Buffer to_;
    Expr tx_;
};

class Serializer {
public:
    Serializer(LowerContext& ctx, int64_t threads) : ctx_(ctx), tx_(ctx.threadIndex), threads_(threads) {}

    Stmt run(const Stmt& body) {
        perThread_ = ThreadDependence(body, tx_.get()).perThreadBuffers();
        return serialize(body);
    }

private:
    bool threadCode(const Stmt& s) const { return uses(s, tx_.get()) || touchesPerThread(s, true); }

    // `for (thread = 0; thread < threads; ++thread) s`, the thread index renamed to the loop's.
    Stmt threadLoop(const Stmt& s, SourceLoc loc) {
        VarPtr tid = makeVar(ctx_.freshName("thread"));
        return forLoop(tid, intImm(0), intImm(threads_), ForKind::Serial, substitute(s, {{tx_, Expr(tid)}}), loc);
    }

    Stmt serialize(const Stmt& s) {
        if (!s) return s;
        if (!hasSplit(s)) return threadCode(s) ? threadLoop(s, s->loc) : s;
        if (const Seq* q = s.as<Seq>()) return serializeSeq(q->stmts, q->loc);
        if (s.as<Barrier>()) return seq({});
        if (const Evaluate* e = s.as<Evaluate>(); e && e->value.as<Call>() && e->value.as<Call>()->name == "sync_warp")
            return seq({});
        if (s.as<TileOpStmt>()) return s;
        if (const LetStmt* let = s.as<LetStmt>()) return serializeLet(let);
        if (const Allocate* a = s.as<Allocate>()) return serializeAllocate(a);
        if (const For* f = s.as<For>()) {
            if (f->forKind == ForKind::Parallel) return s;
            return forLoop(f->var, f->min, f->extent, f->forKind, serialize(f->body), f->loc, f->pipeline, f->step);
        }
        if (const IfThenElse* i = s.as<IfThenElse>())
            return ifThenElse(i->cond, serialize(i->thenCase), serialize(i->elseCase), i->loc);
        if (const While* w = s.as<While>()) return whileLoop(w->cond, serialize(w->body), w->loc);
        return s;
    }

    Stmt serializeSeq(const std::vector<Stmt>& stmts, SourceLoc loc) {
        std::vector<Stmt> out, stretch;
        auto flush = [&] {
            if (stretch.empty()) return;
            Stmt body = seq(std::move(stretch));
            stretch.clear();
            out.push_back(threadLoop(body, body->loc));
        };
        for (const Stmt& s : stmts) {
            if (!hasSplit(s) && threadCode(s)) {
                stretch.push_back(s);
                continue;
            }
            flush();
            out.push_back(serialize(s));
        }
        flush();
        return seq(std::move(out), loc);
    }

    Stmt serializeLet(const LetStmt* let) {
        if (const Call* c = let->value.as<Call>(); c && isCollective(c->name)) return exchange(let, c);
        if (!uses(let->value, tx_.get()) && !readsPerThread(let->value))
            return letStmt(let->var, let->value, serialize(let->body), let->loc);
        // A thread-dependent value the body uses across a split: one entry per thread.
        Buffer lanes = makeBuffer(ctx_.freshName(let->var->name), let->var->dtype, MemScope::Local, {intImm(threads_)});
        perThread_.insert(lanes.get());
        Stmt body = substitute(let->body, {{let->var, load(lanes, {Expr(tx_)})}});
        return allocate(lanes, serializeSeq({store(lanes, {Expr(tx_)}, let->value, let->loc), body}, let->loc), let->loc);
    }

    Stmt serializeAllocate(const Allocate* a) {
        const Buffer& b = a->buffer;
        if (!perThread_.count(b.get()))
            return allocate(b, serialize(a->body), a->loc, a->init);
        std::vector<Expr> shape = {intImm(threads_)};
        shape.insert(shape.end(), b->shape.begin(), b->shape.end());
        Buffer lanes = makeBuffer(b->name, b->dtype, MemScope::Local, shape);
        perThread_.insert(lanes.get());
        Stmt body = Expand(b.get(), lanes, Expr(tx_)).mutate(a->body);
        std::vector<Stmt> stmts;
        if (a->init) stmts.push_back(store(lanes, {Expr(tx_)}, a->init, a->loc));
        stmts.push_back(body);
        return allocate(lanes, serializeSeq(stmts, a->loc), a->loc);
    }

    // let v = collective(x, ...): every thread's x into an exchange array, a split, and each
    // thread's v from the entries of its group.
    Stmt exchange(const LetStmt* let, const Call* c) {
        DType t = c->dtype;
        Buffer lanes = makeBuffer(ctx_.freshName(let->var->name + "_lanes"), t, MemScope::Shared, {intImm(threads_)});
        Expr tx(tx_);
        Expr x = c->args.at(0);
        Stmt publish = store(lanes, {tx}, x, let->loc);
        const std::string& n = c->name;
        Stmt rest;
        if (n.rfind("warp_reduce_", 0) == 0) {
            int64_t width = *asConstInt(c->args.at(1));
            Expr first = tx - tx % width;
            Buffer acc = makeBuffer(ctx_.freshName(let->var->name + "_acc"), t, MemScope::Local, {});
            perThread_.insert(acc.get());
            VarPtr j = makeVar(ctx_.freshName("lane"));
            Expr next = load(lanes, {first + Expr(j)});
            Expr combined = combineReduction(n, load(acc, {}), next);
            Stmt loop = forLoop(j, intImm(1), intImm(width - 1), ForKind::Serial, store(acc, {}, combined, let->loc), let->loc);
            rest = allocate(acc, seq({loop, letStmt(let->var, load(acc, {}), let->body, let->loc)}), let->loc,
                            load(lanes, {first}));
        } else {
            Expr arg = c->args.at(1);
            int64_t width = *asConstInt(c->args.at(2));
            Expr lane = tx % width;
            Expr src;
            if (n == "shfl_xor") {
                Expr partner = binary(BinaryOp::BitXor, tx, arg);
                src = select(binary(BinaryOp::Eq, partner / width, tx / width), partner, tx);
            } else if (n == "shfl_down") {
                src = select(lane + arg < intImm(width), tx + arg, tx);
            } else if (n == "shfl_up") {
                src = select(lane >= arg, tx - arg, tx);
            } else {  // shfl_idx: lane `arg` of the group, wrapped as CUDA's __shfl_sync does
                src = tx - lane + (arg % width + intImm(width)) % width;
            }
            rest = letStmt(let->var, load(lanes, {src}), let->body, let->loc);
        }
        return allocate(lanes, serializeSeq({publish, barrier(let->loc), rest}, let->loc), let->loc);
    }

    // Whether `node` reads a per-thread buffer (or, with `stores`, writes one).
    template <typename Node> bool touchesPerThread(const Node& node, bool stores) const {
        class Touches : public IRVisitor {
        public:
            Touches(const std::set<const BufferNode*>& b, bool stores) : b_(b), stores_(stores) {}
            bool found = false;

        protected:
            void visitLoad(const Load* n) override {
                found = found || b_.count(n->buffer.get());
                IRVisitor::visitLoad(n);
            }
            void visitStore(const Store* n) override {
                found = found || (stores_ && b_.count(n->buffer.get()));
                IRVisitor::visitStore(n);
            }

        private:
            const std::set<const BufferNode*>& b_;
            bool stores_;
        } t(perThread_, stores);
        t.visit(node);
        return t.found;
    }
    bool readsPerThread(const Expr& e) const { return touchesPerThread(e, false); }

    LowerContext& ctx_;
    VarPtr tx_;
    int64_t threads_;
    std::set<const BufferNode*> perThread_;
};

} // namespace

Stmt serializeThreads(const Kernel& kernel, const Stmt& body, LowerContext& ctx) {
    if (kernel.threads <= 1 || !uses(body, ctx.threadIndex.get())) return body;
    return Serializer(ctx, kernel.threads).run(body);
}

} // namespace tlc

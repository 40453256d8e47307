// lower-thread-level: the expert level's builtins in target terms, before the tile passes.
//
//   lane_id(), warp_id(), warp_size()   tx % W, tx / W, W with W the target's warp
//   a collective's width left out       min(W, threads): the warp, or the block when smaller
//   ballot/any/all on the cpu           warp reductions of each lane's bit / 0 or 1 (GPUs have
//                                        the votes as instructions)
//   a collective inside an expression   a `let` of its own just before the statement using it,
//                                        so that each collective is `let v = coll(...)` (on the
//                                        CPU the threads' loops split there; GPU output reads
//                                        better)
//   let r = block_reduce_op(v)          warp reductions, one partial per warp in a shared buffer,
//                                        a barrier, every thread combining the partials, a
//                                        barrier (the buffer may be written again next iteration)
#include "passes/Passes.h"
#include "passes/ThreadDependence.h"

#include "ir/Simplify.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

namespace tlc {

using namespace ir;

namespace {

class ThreadLevel : public IRMutator {
public:
    ThreadLevel(const Kernel& k, LowerContext& ctx)
        : ctx_(ctx), tx_(Expr(ctx.threadIndex)), warp_(ctx.target.threadWarpSize), threads_(k.threads) {}

protected:
    // The target-dependent builtins.
    Expr mutateCall(const Call* n, const Expr& self) override {
        Expr e = IRMutator::mutateCall(n, self);
        const Call* c = e.as<Call>();
        if (c->name == "lane_id") return tx_ % warp_;
        if (c->name == "warp_id") return tx_ / warp_;
        if (c->name == "warp_size") return intImm(warp_);
        if ((c->name == "ballot" || c->name == "any" || c->name == "all") && ctx_.target.backend == Backend::Cpu)
            return voteByReduction(c);
        if (!isCollective(c->name)) return e;
        size_t w = c->name.rfind("shfl_", 0) == 0 ? 2 : 1;  // shuffles: (value, lane, width)
        const int64_t* width = asConstInt(c->args.at(w));
        if (!width || *width != 0) return e;
        int64_t chosen = std::min<int64_t>(warp_, threads_);
        // A block smaller than a warp that is not a power of two, or a last warp left partial:
        // lanes the collective would read do not exist.
        if (!widthFits(chosen)) {
            ctx_.diags.report(DiagId::err_collective_width, SourceRange(loc_), chosen, c->name, warp_,
                              ctx_.target.name, threads_);
            return e;
        }
        std::vector<Expr> args = c->args;
        args[w] = intImm(chosen);
        return call(c->name, c->dtype, args);
    }

    // Collectives move out of expressions into lets of their own.
    Stmt mutateStore(const Store* n, const Stmt& self) override { return hoisted(IRMutator::mutateStore(n, self), n->loc); }
    Stmt mutateEvaluate(const Evaluate* n, const Stmt& self) override {
        return hoisted(IRMutator::mutateEvaluate(n, self), n->loc);
    }
    Stmt mutateIfThenElse(const IfThenElse* n, const Stmt& self) override {
        AtLoc at(loc_, n->loc);
        Expr cond = lift(mutate(n->cond));
        Lets lets = take();
        Stmt t = mutate(n->thenCase), e = mutate(n->elseCase);
        return wrap(ifThenElse(cond, t, e, n->loc), n->loc, std::move(lets));
    }
    Stmt mutateFor(const For* n, const Stmt& self) override {
        AtLoc at(loc_, n->loc);
        Expr mn = lift(mutate(n->min)), ext = lift(mutate(n->extent));
        Lets lets = take();
        Stmt body = mutate(n->body);
        if (mn.same(n->min) && ext.same(n->extent) && body.same(n->body) && lets.empty()) return self;
        return wrap(forLoop(n->var, mn, ext, n->forKind, body, n->loc, n->pipeline, n->step), n->loc, std::move(lets));
    }
    Stmt mutateLetStmt(const LetStmt* n, const Stmt& self) override {
        AtLoc at(loc_, n->loc);
        Expr value = mutate(n->value);
        // `let v = collective(...)` is already in its final form; anything inside its arguments
        // and any collective deeper in the value is lifted.
        const Call* c = value.as<Call>();
        bool whole = c && (isCollective(c->name) || isBlockReduce(c->name));
        if (whole) {
            std::vector<Expr> args;
            for (const auto& a : c->args) args.push_back(lift(a));
            value = call(c->name, c->dtype, args);
        } else {
            value = lift(value);
        }
        Lets lets = take();
        Stmt body = mutate(n->body);
        Stmt out = whole && isBlockReduce(c->name) ? blockReduce(n->var, value.as<Call>(), body, n->loc)
                                                    : letStmt(n->var, value, body, n->loc);
        return wrap(out, n->loc, std::move(lets));
    }

private:

    // A collective's default width (sema checks it too): a power of two dividing the block.
    bool widthFits(int64_t width) const { return (width & (width - 1)) == 0 && threads_ % width == 0; }

    // A vote as a warp reduction: the lanes' bits summed (each lane's bit is its own, so the sum
    // is the OR), or the predicate's maximum (any) or minimum (all) as 0 or 1.
    Expr voteByReduction(const Call* c) {
        int64_t width = std::min<int64_t>(warp_, threads_);
        const Expr& pred = c->args.at(0);
        if (c->name == "ballot") {
            Expr bit = binary(BinaryOp::Shl, cast(DType::U64, intImm(1)), cast(DType::U64, tx_ % warp_));
            return call("warp_reduce_sum", DType::U64, {select(pred, bit, cast(DType::U64, intImm(0))), intImm(width)});
        }
        Expr one = select(pred, intImm(1), intImm(0));
        return binary(BinaryOp::Ne, call(c->name == "any" ? "warp_reduce_max" : "warp_reduce_min", DType::I32, {one, intImm(width)}),
                      intImm(0));
    }

    // Replaces every collective in `e` (innermost first) by a variable, remembering the lets.
    Expr lift(const Expr& e) {
        class Lifter : public IRMutator {
        public:
            explicit Lifter(ThreadLevel& p) : p_(p) {}

        protected:
            Expr mutateCall(const Call* n, const Expr& self) override {
                Expr e = IRMutator::mutateCall(n, self);
                const Call* c = e.as<Call>();
                if (!isCollective(c->name) && !isBlockReduce(c->name)) return e;
                VarPtr v = makeVar(p_.ctx_.freshName(c->name.substr(0, c->name.find('_')) + "_value"), c->dtype);
                p_.pending_.push_back({v, e});
                return Expr(v);
            }

        private:
            ThreadLevel& p_;
        } lifter(*this);
        return lifter.mutate(e);
    }

    Stmt hoisted(Stmt s, SourceLoc loc) {
        AtLoc at(loc_, loc);
        // Lift out of what the default mutation rebuilt.
        if (const Store* st = s.as<Store>()) {
            std::vector<Expr> idx;
            for (const auto& i : st->indices) idx.push_back(lift(i));
            Expr v = lift(st->value);
            if (pending_.empty()) return s;
            s = store(st->buffer, idx, v, st->loc, st->storeKind);
        } else if (const Evaluate* ev = s.as<Evaluate>()) {
            Expr v = lift(ev->value);
            if (pending_.empty()) return s;
            s = evaluate(v, ev->loc);
        }
        return wrap(s, loc, take());
    }

    using Lets = std::vector<std::pair<VarPtr, Expr>>;
    Lets take() {
        Lets lets = std::move(pending_);
        pending_.clear();
        return lets;
    }

    // The lifted lets around `s`, the first lifted outermost (each may use the ones before).
    Stmt wrap(Stmt s, SourceLoc loc, Lets lets) {
        for (size_t i = lets.size(); i-- > 0;) {
            const Call* c = lets[i].second.as<Call>();
            s = isBlockReduce(c->name) ? blockReduce(lets[i].first, c, s, loc) : letStmt(lets[i].first, lets[i].second, s, loc);
        }
        return s;
    }

    Stmt blockReduce(const VarPtr& result, const Call* c, Stmt body, SourceLoc loc) {
        std::string op = c->name.substr(std::string("block_reduce").size());  // "_sum"
        Expr value = c->args.at(0);
        DType t = c->dtype;
        int64_t width = std::min<int64_t>(warp_, threads_);
        if (!widthFits(width)) {
            ctx_.diags.report(DiagId::err_collective_width, SourceRange(loc.valid() ? loc : loc_), width, c->name, warp_,
                              ctx_.target.name, threads_);
            return letStmt(result, value, body, loc);
        }
        Expr warpValue = call("warp_reduce" + op, t, {value, intImm(width)});
        int64_t warps = threads_ / width;
        if (warps == 1) return letStmt(result, warpValue, body, loc);
        Buffer partials = makeBuffer(ctx_.freshName(result->name + "_partials"), t, MemScope::Shared, {intImm(warps)});
        Buffer acc = makeBuffer(ctx_.freshName(result->name + "_acc"), t, MemScope::Local, {});
        VarPtr perWarp = makeVar(ctx_.freshName(result->name + "_warp"), t);
        VarPtr i = makeVar(ctx_.freshName("w"));
        Stmt publish = letStmt(perWarp, warpValue,
                               ifThenElse(binary(BinaryOp::Eq, tx_ % width, intImm(0)),
                                          store(partials, {tx_ / width}, Expr(perWarp), loc)),
                               loc);
        Stmt gather = forLoop(i, intImm(1), intImm(warps - 1), ForKind::Serial,
                              store(acc, {}, combineReduction(op, load(acc, {}), load(partials, {Expr(i)})), loc), loc);
        Stmt rest = allocate(acc, seq({gather, barrier(loc), letStmt(result, load(acc, {}), body, loc)}, loc), loc,
                             load(partials, {intImm(0)}));
        return allocate(partials, seq({publish, barrier(loc), rest}, loc), loc);
    }

    LowerContext& ctx_;
    Expr tx_;
    int64_t warp_, threads_;
    SourceLoc loc_;
    Lets pending_;
};

} // namespace

Stmt lowerThreadLevel(const Kernel& kernel, const Stmt& body, LowerContext& ctx) {
    return ThreadLevel(kernel, ctx).mutate(body);
}

} // namespace tlc

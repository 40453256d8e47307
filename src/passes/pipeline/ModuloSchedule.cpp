// The modulo schedule (docs/lowering.md, "pipeline-loops"): the top-level statements of the body
// have a stage σ and a position in the order of one step; step t runs, in that order, each
// statement for iteration t - σ. The loop becomes
//
//     prologue   steps 0 .. S-1           (statements of stage <= t, guarded by t - σ < n)
//     steady     steps S .. n-1           (every statement, no guards)
//     epilogue   steps max(n, S) .. n+S-1 (statements of stage > t - n)
//
// with S the last stage. Every step that runs commits one cp.async group (after its last async
// copy, even when the step has none), so that at the top of step t exactly t groups are
// committed; a step with statements that read async-filled buffers starts with
// `cp_async_wait_group(N)`, N the number of the newest groups it may leave in flight, and a
// barrier. That barrier publishes the copies of every thread and also ends the previous step,
// the last reader of the versions this step's copies overwrite. Other barriers are
// insert-barriers' (which knows that different versions of a buffer do not overlap).
//
// TMA producers and their readers follow the mbarrier protocol instead (Tma.cpp): thread 0
// claims a version before the step's first TMA load, the first reader waits until it is full,
// the last reader releases it.
#include "passes/pipeline/LoopPlan.h"

#include "ir/Simplify.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>

namespace tlc::pipeline {

using namespace ir;

namespace {

// The statements one step runs, each with its guard (null for none).
using StepItems = std::vector<std::pair<size_t, Expr>>;

class ModuloSchedule {
public:
    ModuloSchedule(const LoopPlan& plan, LowerContext& ctx)
        : plan_(plan), ctx_(ctx), mbarriers_(plan, ctx), m_(plan.items.size()), loc_(plan.loop->loc) {
        planAsyncWaits();
        orderSteps();
    }

    Stmt emit() {
        const For* n = plan_.loop;
        std::string names = versionList(plan_);
        std::vector<Stmt> code;
        code.push_back(comment(fmt::format("pipelined loop over {}: {} stages{}{}; prologue", n->var->name,
                                           plan_.last + 1, names.empty() ? "" : ", versions: ", names),
                               loc_));
        for (const auto& note : plan_.tma.notes) code.push_back(comment(note, loc_));
        if (plan_.tma.full) code.push_back(initBarriers(plan_, ctx_));
        code.push_back(pingPongEnter(plan_, ctx_));
        prologue(code);
        code.push_back(comment("steady state", loc_));
        steadyState(code);
        code.push_back(comment("epilogue", loc_));
        epilogue(code);
        code.push_back(mbarriers_.drain());
        code.push_back(pingPongLeave(plan_, ctx_));
        return seq(code, loc_);
    }

private:
    const LoopPlan& plan_;
    LowerContext& ctx_;
    MbarrierProtocol mbarriers_;
    const size_t m_;
    const SourceLoc loc_;
    size_t commitAfter_ = 0;                 // the async producer last in the order (m_: none)
    std::vector<int> waitAllows_;            // groups each item may leave in flight at the top of its step
    std::vector<size_t> stepOrder_;

    // Waits: a reader of an async buffer at distance d needs the group committed d steps back;
    // at the top of its step t groups are committed, so d - 1 may stay in flight.
    void planAsyncWaits() {
        const std::vector<Item>& items = plan_.items;
        commitAfter_ = m_;
        for (size_t i = 0; i < m_; ++i)
            if (items[i].async && !items[i].tma && (commitAfter_ == m_ || items[i].pos > items[commitAfter_].pos))
                commitAfter_ = i;
        waitAllows_.assign(m_, INT_MAX);
        for (size_t i = 0; i < m_; ++i)
            for (const auto& [b, v] : plan_.versions)
                if (v.async && !items[v.writer].tma && items[i].fp.reads.count(b) && i != v.writer)
                    waitAllows_[i] = std::min(waitAllows_[i], items[i].stage - items[v.writer].stage - 1);
    }

    // With a gemm group in flight, step t releases the stage of iteration t - S - 1 after its
    // readers, which is the one its TMA loads (iteration t) take: they go last.
    void orderSteps() {
        const bool groupInFlight = plan_.inFlight != m_;
        for (size_t i : plan_.byPos)
            if (!groupInFlight || !plan_.items[i].tma) stepOrder_.push_back(i);
        if (groupInFlight)
            for (size_t i : plan_.byPos)
                if (plan_.items[i].tma) stepOrder_.push_back(i);
    }

    // One step: the statements `present` runs, for iterations t - σ.
    Stmt step(const Expr& t, const StepItems& present, bool commit = true) const {
        const std::vector<Item>& items = plan_.items;
        std::vector<Stmt> out;
        int allows = INT_MAX;
        for (const auto& [i, g] : present) allows = std::min(allows, waitAllows_[i]);
        if (allows != INT_MAX) {
            out.push_back(evaluate(call("cp_async_wait_group", DType::I32, {intImm(allows)}), loc_));
            out.push_back(barrier(loc_));
        }
        Expr guard;
        std::vector<Stmt> pending;
        auto flush = [&] {
            if (pending.empty()) return;
            out.push_back(guard ? ifThenElse(guard, seq(pending), {}, loc_) : seq(pending));
            pending.clear();
        };
        auto find = [&](size_t i) {
            return std::find_if(present.begin(), present.end(), [&](const auto& p) { return p.first == i; });
        };
        // The first TMA producer and the first and last TMA readers of this step, in order.
        // With the gemm overlap (Overlap.cpp) the second gemm reads its tiles a stage after the
        // first: the wait on `full` goes before the first gemm's stage, the release after the
        // second gemm's wait.
        const OverlapPlan& ov = plan_.overlap;
        const bool firstIn = ov.used() && find(ov.first) != present.end();
        const bool secondIn = ov.used() && find(ov.second) != present.end();
        size_t firstProducer = m_, firstReader = m_, lastReader = m_, secondWaitBefore = m_;
        bool afterSecond = false;
        for (size_t i : stepOrder_)
            if (find(i) != present.end()) {
                if (items[i].tma && firstProducer == m_) firstProducer = i;
                if (items[i].tmaReader && firstReader == m_ && (!ov.used() || items[i].stage == items[ov.first].stage))
                    firstReader = i;
                if (items[i].tmaReader && !ov.used()) lastReader = i;
                if (afterSecond && secondWaitBefore == m_)
                    for (const BufferNode* b : ov.carried)
                        if (items[i].fp.touches(b)) secondWaitBefore = i;
                afterSecond |= i == ov.second;
            }
        // The second gemm's wait, and the release of the tiles it read.
        auto waitSecond = [&](std::vector<Stmt>& to) {
            Expr iter = simplify(t - int64_t(items[ov.second].stage));
            to.push_back(overlapWait(plan_, ov.second, 0));
            if (plan_.tma.used()) to.push_back(mbarriers_.releaseDone(iter));
        };
        for (size_t i : stepOrder_) {
            auto it = find(i);
            if (it != present.end()) {
                bool same = (!guard && !it->second) || (guard && it->second && equal(guard, it->second));
                if (!same) flush();
                guard = it->second;
                Expr iter = simplify(t - int64_t(items[i].stage));
                if (i == firstProducer) pending.push_back(mbarriers_.produce(iter));
                if (i == firstReader) pending.push_back(mbarriers_.consume(iter));
                if (secondIn && i == secondWaitBefore) waitSecond(pending);
                Stmt s = instance(plan_, i, iter);
                if (ov.used() && (i == ov.first || i == ov.second)) s = overlapGemm(plan_, s, i, firstIn && secondIn);
                pending.push_back(s);
                // The first gemm's wait: the second's group, issued after it, may stay in flight.
                if (firstIn && i == (secondIn ? ov.second : ov.first))
                    pending.push_back(overlapWait(plan_, ov.first, secondIn ? 1 : 0));
                if (i == lastReader) pending.push_back(mbarriers_.releaseDone(iter));
            }
            if (i == commitAfter_ && commit) {
                flush();
                out.push_back(evaluate(call("cp_async_commit", DType::I32, {}), loc_));
            }
        }
        if (secondIn && secondWaitBefore == m_) waitSecond(pending);
        flush();
        return seq(out, loc_);
    }

    // Steps 0 .. S-1: statements of stage σ <= t, each for an iteration t - σ that exists.
    void prologue(std::vector<Stmt>& code) const {
        const Expr& count = plan_.loop->extent;
        for (int t = 0; t < plan_.last; ++t) {
            StepItems present;
            for (size_t i = 0; i < m_; ++i) {
                if (plan_.items[i].stage > t) continue;
                Expr g = simplify(intImm(t - plan_.items[i].stage) < count);
                if (const int64_t* c = asConstInt(g)) {
                    if (!*c) continue;
                    g = Expr();
                }
                present.push_back({i, g});
            }
            code.push_back(step(intImm(t), present));
        }
    }

    // Steps S .. n-1: every statement, no guards.
    void steadyState(std::vector<Stmt>& code) const {
        const For* n = plan_.loop;
        VarPtr t = makeVar(n->var->name, n->var->dtype);
        StepItems all;
        for (size_t i = 0; i < m_; ++i) all.push_back({i, Expr()});
        code.push_back(forLoop(t, intImm(plan_.last), simplify(n->extent - int64_t(plan_.last)), ForKind::Serial,
                               step(Expr(t), all), loc_));
    }

    // Steps n .. n+S-1: the statements of stage σ > t - n, for the last iterations.
    void epilogue(std::vector<Stmt>& code) const {
        const Expr& count = plan_.loop->extent;
        const int last = plan_.last;
        for (int j = 0; j < last; ++j) {
            StepItems present;
            for (size_t i = 0; i < m_; ++i)
                if (plan_.items[i].stage > j) present.push_back({i, Expr()});
            if (present.empty()) break;
            // Steps before S ran in the prologue already (when n < S).
            Expr g = simplify(binary(BinaryOp::Le, intImm(last - j), count));
            // The last step commits nothing: no wait follows.
            Stmt s = step(simplify(count + int64_t(j)), present, j + 1 < last);
            if (const int64_t* c = asConstInt(g)) {
                if (*c) code.push_back(s);
            } else {
                code.push_back(ifThenElse(g, s, {}, loc_));
            }
        }
    }
};

} // namespace

Stmt emitModuloSchedule(const LoopPlan& plan, PipelinedKernel& kernel, LowerContext& ctx) {
    Stmt out = plan.unroll > 1 ? unrolledSchedule(plan, ctx) : ModuloSchedule(plan, ctx).emit();
    const FlatBody& flat = plan.flat;
    for (auto it = flat.allocs.rbegin(); it != flat.allocs.rend(); ++it) {
        auto r = plan.versionedBuffers.find((*it)->buffer.get());
        out = allocate(r != plan.versionedBuffers.end() ? r->second : (*it)->buffer, out, (*it)->loc);
    }
    for (const auto& [b, nb] : plan.versionedBuffers) kernel.versioned[b] = nb;
    if (plan.tma.full) out = allocate(plan.tma.full, allocate(plan.tma.empty, out, plan.loop->loc), plan.loop->loc);
    return out;
}

} // namespace tlc::pipeline

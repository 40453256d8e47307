// The ping-pong schedule (FlashAttention-3, sect. 3.1): the consumer warpgroups of a loop with
// two or more wgmma gemms and work between them take turns issuing the gemms, so that while one
// warpgroup runs the statements between its gemms (flash attention's softmax: exp2 on the
// multi-function units, shuffles), the next one's gemms keep the tensor cores busy. Without
// turns both warpgroups tend to reach their gemms together and their softmax together, and the
// tensor cores idle through every softmax.
//
// Turns are named barriers, one per warpgroup (firstBarrier + w, each counting 256 threads:
// the warpgroup that waits and the one before it that arrives). Each gemm of the loop is one
// turn (GemmOp::withTurn): warpgroup w waits for its barrier before its first wgmma and, as soon
// as the group is committed, arrives on the next warpgroup's; then it waits for its own group.
// Before the loop the last warpgroup arrives on warpgroup 0's barrier (warpgroup 0 goes first);
// after it warpgroup 0 takes the turn the last warpgroup passed on at its last gemm, so that no
// arrival is left over (a barrier with arrivals pending would complete early next time).
//
// Why this cannot deadlock: turn i of warpgroup w waits only for turn i of warpgroup w - 1 (or
// turn i - 1 of the last one, for w = 0), which every warpgroup reaches in the same program
// order; nothing that could wait lies between a turn's wait and its arrival (the gemm stages
// and packs its operands before the wait); a block barrier outside the turns is reached by
// every warpgroup in the same order too; and the TMA producer (thread 0 in the modulo schedule)
// waits for the release of iteration t - V in step t, which needs only turns of earlier steps.
#include "passes/pipeline/LoopPlan.h"

#include "ops/gemm/Gemm.h"
#include "ops/gemm/GemmPlan.h"
#include "ops/gemm/GemmWgmma.h"

#include <fmt/format.h>

namespace tlc::pipeline {

using namespace ir;

namespace {

constexpr int64_t kWarpgroup = 128;

// Why the loop does not get turns (empty: it does); `gemms` the items that are gemms.
std::string pingPongIssue(const LoopPlan& plan, const PipelinedKernel& kernel, const LowerContext& ctx,
                          const std::vector<size_t>& gemms) {
    const For* n = plan.loop;
    const int64_t groups = ctx.threads / kWarpgroup;
    for (size_t i = 0; i < plan.items.size(); ++i)
        for (const TileOp* op : plan.items[i].fp.ops)
            if (dynamic_cast<const ops::GemmOp*>(op) && !gemmOf(plan.items[i]))
                return "a gemm of the loop runs inside another statement";
    if (!n->pipeline.order.empty() || !n->pipeline.stage.empty())
        return "the loop has 'order'/'stage' lists (the author's schedule)";
    if (ctx.threads % kWarpgroup != 0) return fmt::format("its {} threads are not whole warpgroups", ctx.threads);
    if (groups < 2)
        return fmt::format("its {} threads are one warpgroup: none to take turns with (two warpgroups that "
                           "each own their rows of the tiles would, e.g. 256 threads with 128 rows)",
                           ctx.threads);
    if (kernel.pingPong) return "another loop of the kernel takes turns already";
    if (!kernel.topLevel.count(n))
        return "it runs inside another loop or a condition (a run's last turn would meet the next run's first)";
    // In a persistent kernel's loop over tiles, a block barrier must separate one tile's turns
    // from the next's: the modulo schedule's barrier before it initialises its mbarriers again.
    if (kernel.topLevel.at(n).tileLoop && (plan.warpSpecialize || !plan.tma.used()))
        return "it runs in a persistent loop over tiles with no block barrier between a tile's last turn and the "
               "next tile's first";
    for (size_t g : gemms) {
        const ops::GemmOp& gemm = *gemmOf(plan.items[g]);
        ops::GemmPlan gp;
        if (std::string why = ops::planWgmma(gemm, ctx, gp); !why.empty())
            return fmt::format("'{}' is not a wgmma: {}", gemm.str(), why);
        if (gp.warpsN != 1 || gp.warpsM != groups)
            return fmt::format("'{}' splits its accumulator {} x {} over the warpgroups: they do not each own whole "
                               "rows, so the statements between the gemms need them all (policy = full_row with 64 "
                               "rows a warpgroup gives whole rows)",
                               gemm.str(), gp.warpsM, gp.warpsN);
    }
    // Something to overlap: a statement between the first and the last gemm of a step (with the
    // gemm overlap, Overlap.cpp, the two gemms are one turn and the statements follow them).
    if (plan.overlap.used()) return "";
    auto at = [&](size_t i) { return std::find(plan.byPos.begin(), plan.byPos.end(), i) - plan.byPos.begin(); };
    auto first = at(gemms.front()), last = at(gemms.front());
    for (size_t g : gemms) {
        first = std::min(first, at(g));
        last = std::max(last, at(g));
    }
    for (auto p = first + 1; p < last; ++p) {
        const Item& it = plan.items[plan.byPos[size_t(p)]];
        if (!gemmOf(it) && !it.async && !it.tma) return "";
    }
    return "nothing runs between its gemms: there is no work for the other warpgroup's gemms to overlap";
}

Stmt pingPongCall(const char* name, int64_t id, SourceLoc loc) {
    return evaluate(call(name, DType::I32, {intImm(id), intImm(2 * kWarpgroup)}), loc);
}

} // namespace

PingPongPlan choosePingPong(const LoopPlan& plan, PipelinedKernel& kernel, LowerContext& ctx) {
    PingPongPlan out;
    if (!ctx.target.has(Feature::Wgmma)) return out;
    std::vector<size_t> gemms;
    for (size_t i : plan.byPos)
        if (gemmOf(plan.items[i])) gemms.push_back(i);
    // One gemm: its group in flight is the overlap (WgmmaInFlight.cpp); nothing to log here.
    if (gemms.size() < 2) return out;
    const For* n = plan.loop;
    std::string why = pingPongIssue(plan, kernel, ctx, gemms);
    const int64_t groups = ctx.threads / kWarpgroup;
    if (why.empty()) {
        out.warpgroups = groups;
        out.gemms.insert(gemms.begin(), gemms.end());
        kernel.pingPong = true;
    }
    ctx.decide(fmt::format("warpgroup ping-pong of the loop over {}", n->var->name),
               why.empty() ? fmt::format("{} warpgroups take turns issuing its {} gemms (named barriers {} .. {})",
                                         groups, gemms.size(), out.firstBarrier, out.firstBarrier + groups - 1)
                           : "none",
               "lowering",
               why.empty() ? "each warpgroup owns its rows of every gemm's accumulator, so the statements between "
                             "the gemms need no other warpgroup: while one warpgroup runs them, the next issues "
                             "its wgmmas (the tensor cores would otherwise idle while all run them at once)"
                           : why,
               n->loc);
    return out;
}

// Warpgroup 0 takes the first turn: the last warpgroup stands for the one before it.
Stmt pingPongEnter(const LoopPlan& plan, LowerContext& ctx) {
    const PingPongPlan& pp = plan.pingPong;
    const SourceLoc loc = plan.loop->loc;
    if (!pp.used()) return seq({}, loc);
    Expr last = binary(BinaryOp::Eq, ctx.tx() / kWarpgroup, intImm(pp.warpgroups - 1));
    return seq({comment(fmt::format("ping-pong: {} warpgroups take turns issuing the loop's gemms; warpgroup 0 "
                                    "goes first",
                                    pp.warpgroups),
                        loc),
                ifThenElse(last, pingPongCall("named_barrier_arrive", pp.firstBarrier, loc), {}, loc)},
               loc);
}

// The last warpgroup's last turn passed on to warpgroup 0, which takes it here.
Stmt pingPongLeave(const LoopPlan& plan, LowerContext& ctx) {
    const PingPongPlan& pp = plan.pingPong;
    const SourceLoc loc = plan.loop->loc;
    if (!pp.used()) return seq({}, loc);
    Expr first = binary(BinaryOp::Eq, ctx.tx() / kWarpgroup, intImm(0));
    return seq({comment("ping-pong: warpgroup 0 takes the turn the last warpgroup passed on, none left over", loc),
                ifThenElse(first, pingPongCall("named_barrier_sync", pp.firstBarrier, loc), {}, loc)},
               loc);
}

} // namespace tlc::pipeline

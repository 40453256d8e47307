// Which gemm of a pipelined loop leaves its wgmma group in flight past its step (wait_group<1>),
// so that the next iteration's wgmma overlaps it.
#include "passes/pipeline/LoopPlan.h"

#include "ops/gemm/Gemm.h"
#include "ops/gemm/GemmWgmma.h"

#include <fmt/format.h>

namespace tlc::pipeline {

using namespace ir;

// The gemm whose wgmma group may stay in flight past its step, items.size() for none; each
// gemm's choice goes into the decision log. The group reads its stages and writes its
// accumulator until the next iteration's wait, so: the stages must be TMA tiles, whose release
// the loop can delay by an iteration (cp.async copies of step t overwrite the version step
// t - 1's gemm read right after the step's barrier: that would need one version more, so those
// gemms wait for their group); nothing else in the loop may touch the accumulator (flash
// attention's softmax reads one gemm's result and rescales the other's); and wait_group counts
// groups, so one gemm per loop.
size_t chooseGroupInFlight(const LoopPlan& plan, LowerContext& ctx) {
    const For* n = plan.loop;
    const std::vector<Item>& items = plan.items;
    const Versions& vers = plan.versions;
    const bool tmaLoads = plan.tma.used();
    const size_t m = items.size();
    if (!ctx.target.has(Feature::Wgmma)) return m;
    std::vector<size_t> gemms;
    for (size_t i = 0; i < m; ++i)
        for (const TileOp* op : items[i].fp.ops)
            if (dynamic_cast<const ops::GemmOp*>(op)) gemms.push_back(i);
    size_t chosen = m;
    // A statement of the loop as the reasons name it: the tile op, or its line.
    auto statement = [&](size_t i) {
        if (const auto* t = items[i].stmt.as<TileOpStmt>()) return "'" + t->op->str() + "'";
        const SourceLoc at = items[i].stmt->loc;
        return at.valid() ? fmt::format("the statement of line {}", at.line) : std::string("a statement");
    };
    for (size_t g : gemms) {
        const auto* t = items[g].stmt.as<TileOpStmt>();
        const auto* gemm = t ? dynamic_cast<const ops::GemmOp*>(t->op.get()) : nullptr;
        ops::GemmPlan gemmPlan;
        // Gemms that will not be wgmma have no group: their plan logs why.
        if (gemm && !ops::planWgmma(*gemm, ctx, gemmPlan).empty()) continue;
        std::string why;
        if (!gemm) why = "it runs inside another statement of the loop";
        else if (!n->pipeline.order.empty() || !n->pipeline.stage.empty()) why = "the loop has 'order'/'stage' lists";
        else if (gemm->clearAccum()) why = "it clears its accumulator (clear_accum) while the last group writes it";
        // Operands: TMA stages (released after the wait that covers them), or tiles the loop
        // does not write (Q_s loaded before it).
        for (const Region* r : gemm ? std::vector{&gemm->a(), &gemm->b()} : std::vector<const Region*>{}) {
            if (!why.empty()) break;
            auto v = vers.find(r->buffer.get());
            if (v != vers.end() && tmaLoads && items[v->second.writer].tma) continue;
            if (v != vers.end() && items[v->second.writer].async)
                why = fmt::format("'{}' comes by cp.async: the copies of step t overwrite the version step t - 1's "
                                  "gemm read as soon as the step starts (that would need one more version)",
                                  r->buffer->name);
            else if (v != vers.end())
                why = fmt::format("'{}' is not a stage the loop's TMA loads fill", r->buffer->name);
            for (size_t i = 0; i < m && why.empty(); ++i)
                if (i != g && items[i].fp.writes.count(r->buffer.get()))
                    why = fmt::format("{} in the loop writes its operand '{}', which a group in flight still "
                                      "reads",
                                      statement(i), r->buffer->name);
        }
        for (size_t i = 0; i < m && why.empty(); ++i)
            if (i != g && items[i].fp.touches(gemm->c().buffer.get()))
                why = fmt::format("{} in the loop uses its accumulator '{}', which a group in flight still "
                                  "writes",
                                  statement(i), gemm->c().buffer->name);
        if (why.empty() && gemms.size() > 1)
            why = fmt::format("the loop has {} gemms and wait_group counts groups: each waits for its own",
                              gemms.size());
        // A fragment operand the loop does not write is still read from registers packed for the
        // group (the rs form) or from a shared tile staged for it, both made anew by the next
        // step's gemm while the group would still read them.
        for (const Region* r : gemm ? std::vector{&gemm->a(), &gemm->b()} : std::vector<const Region*>{})
            if (why.empty() && r->buffer->scope == MemScope::Fragment)
                why = fmt::format("'{}' is a fragment: the registers (or staged tile) the group reads are made "
                                  "anew by the next step's gemm",
                                  r->buffer->name);
        if (why.empty()) chosen = g;
        ctx.decide(fmt::format("wgmma group of {}", gemm ? gemm->str() : std::string("a gemm")),
                   why.empty() ? "left in flight (wait_group<1>)" : "waited for in its step (wait_group<0>)",
                   "lowering",
                   why.empty() ? "the next iteration's wgmma overlaps it; the loop releases each TMA stage one "
                                 "iteration later, after the wait that covers its reader, and drains the last "
                                 "group after the loop"
                               : why,
                   n->loc);
    }
    return chosen;
}

} // namespace tlc::pipeline

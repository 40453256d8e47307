// Which gemm of a pipelined loop leaves its wgmma group in flight past its step (wait_group<1>),
// so that the next iteration's wgmma overlaps it.
#include "passes/pipeline/LoopPlan.h"

#include "ops/gemm/Gemm.h"
#include "ops/gemm/GemmWgmma.h"
#include "passes/SharedLiveness.h"

#include <fmt/format.h>

#include <set>

namespace tlc::pipeline {

using namespace ir;

// The gemm whose wgmma group may stay in flight past its step, items.size() for none; each
// gemm's choice goes into the decision log. The group reads its stages and writes its
// accumulator until the next iteration's wait, so: the stages must be TMA tiles, whose release
// the loop can delay by an iteration, or, in a loop with TMA loads, cp.async tiles given one
// version more than stages: step t + 1 fills iteration t + 1's version right after its top
// barrier, while step t's group (iteration t - S, S the last stage) may still read; with S + 1
// versions that is the same version, with S + 2 it is iteration t - S - 1's, which every
// thread's wait_group<1> in step t saw done before the barrier; nothing else in the loop may
// touch the accumulator (flash attention's softmax reads one gemm's result and rescales the
// other's); and wait_group counts groups, so one gemm per loop. The extra versions go into
// plan.versions (VersionPlan::extra) and the versioned buffers.
size_t chooseGroupInFlight(LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx) {
    const For* n = plan.loop;
    const std::vector<Item>& items = plan.items;
    Versions& vers = plan.versions;
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
        std::set<const BufferNode*> extra;  // cp.async stages that need one version more
        if (!gemm) why = "it runs inside another statement of the loop";
        else if (!n->pipeline.order.empty() || !n->pipeline.stage.empty()) why = "the loop has 'order'/'stage' lists";
        else if (gemm->clearAccum()) why = "it clears its accumulator (clear_accum) while the last group writes it";
        // Operands: TMA stages (released after the wait that covers them), or tiles the loop
        // does not write (Q_s loaded before it).
        for (const Region* r : gemm ? std::vector{&gemm->a(), &gemm->b()} : std::vector<const Region*>{}) {
            if (!why.empty()) break;
            auto v = vers.find(r->buffer.get());
            if (v != vers.end() && tmaLoads && items[v->second.writer].tma) continue;
            if (v != vers.end() && items[v->second.writer].async && tmaLoads) {
                extra.insert(r->buffer.get());
                continue;
            }
            if (v != vers.end() && items[v->second.writer].async)
                why = fmt::format("'{}' comes by cp.async in a loop without TMA loads: the fills of step t "
                                  "overwrite the version step t - 1's gemm read as soon as the step starts "
                                  "(kept in flight only beside TMA stages, whose release the group delays)",
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
        // One version more of each cp.async stage, where shared memory has room.
        if (why.empty() && !extra.empty()) {
            std::map<const BufferNode*, int> versions;
            for (const auto& [b, nb] : kernel.versioned)
                if (const int64_t* c = asConstInt(nb->shape[0])) versions[b] = int(*c);
            for (const auto& [b, v] : vers) versions[b] = v.count + (extra.count(b) ? 1 : 0);
            const int64_t bytes = plannedSharedBytes(kernel.body, versions, true);
            if (bytes > ctx.target.sharedMemPerBlock)
                why = fmt::format("its cp.async stage '{}' would need one version more for the group in flight: "
                                  "{} bytes of shared memory where the target allows {}",
                                  (*extra.begin())->name, bytes, ctx.target.sharedMemPerBlock);
        }
        std::string names;
        for (const BufferNode* b : extra) names += (names.empty() ? "" : ", ") + b->name;
        if (why.empty()) chosen = g;
        ctx.decide(fmt::format("wgmma group of {}", gemm ? gemm->str() : std::string("a gemm")),
                   why.empty() ? "left in flight (wait_group<1>)" : "waited for in its step (wait_group<0>)",
                   "lowering",
                   why.empty() ? "the next iteration's wgmma overlaps it; the loop releases each TMA stage one "
                                 "iteration later, after the wait that covers its reader, and drains the last "
                                 "group after the loop" +
                                     (names.empty() ? std::string()
                                                    : "; the cp.async stage(s) " + names +
                                                          " get one version more than stages, since the next "
                                                          "step's fills start before the group's wait")
                               : why,
                   n->loc);
    }
    if (chosen != m) {
        const auto* gemm = static_cast<const ops::GemmOp*>(items[chosen].stmt.as<TileOpStmt>()->op.get());
        bool bumped = false;
        for (const Region* r : {&gemm->a(), &gemm->b()}) {
            auto v = vers.find(r->buffer.get());
            if (v == vers.end() || !items[v->second.writer].async || items[v->second.writer].tma || v->second.extra)
                continue;
            v->second.extra = 1;
            v->second.count += 1;
            bumped = true;
        }
        if (bumped) versionBuffers(plan);
    }
    return chosen;
}

} // namespace tlc::pipeline

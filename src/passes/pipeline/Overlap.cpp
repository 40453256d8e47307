// The intra-warpgroup overlap (FlashAttention-3, sect. 3.2; `pipelined(..., overlap = true)`,
// experimental and off unless asked for): in a loop of two wgmma gemms with work between them,
// G1 (flash attention's S = Q K^T) and G2 (O += P V, the loop's last statement), G2 moves one
// stage later and right after G1 in the step, so that step t issues G1 of iteration j and G2 of
// iteration j - 1 back to back, waits for G1 only (wait_group<1>), runs the statements between
// them (the softmax of S_j) while G2 runs, and waits for G2 before the first statement that
// touches G2's operands or accumulator (the rescale of O), then releases G2's stage:
//
//     G1(j) issue; G2(j - 1) issue; wait<1>; softmax(j) ...; wait<0>; release(j - 1); rescale(j) ...
//
// The order of every buffer's accesses stays that of the loop as written: what G2 touches (O, P)
// is touched only by statements between G1 and G2 as written, which in iteration j come after G2
// of j - 1 and before G2 of j, as before. So the fragments G2 shares with them need no versions
// (the check that a fragment used at two stages makes the loop run in order leaves them out).
// The stage tiles G2 reads (V) get one more version; the TMA tiles share one pair of barriers per
// version, so all of them get as many (Tma.cpp's readers at two stages: the wait on `full` before
// G1, the release after G2's wait).
#include "passes/pipeline/Depth.h"
#include "passes/pipeline/LoopPlan.h"

#include "ops/gemm/Gemm.h"
#include "ops/gemm/GemmPlan.h"
#include "ops/gemm/GemmWgmma.h"
#include "passes/SharedLiveness.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::pipeline {

using namespace ir;

namespace {

// The registers a thread would hold with the overlap: every fragment of the kernel, the packed
// A operand of G2 once more (it stays live while G1 writes its accumulator), and 32 for the rest
// (the recommender's estimate, docs/recommend.md).
int64_t registerEstimate(const LoopPlan& plan, const PipelinedKernel& kernel, const LowerContext& ctx, size_t g2) {
    const int64_t fragmentsBytes = fragmentBytes(kernel.body);
    int64_t extra = 0;
    const ops::GemmOp& gemm = *gemmOf(plan.items[g2]);
    std::vector<int64_t> shape;
    if (gemm.a().buffer->scope == MemScope::Fragment && constantShape(gemm.a().buffer, shape)) {
        int64_t elements = 1;
        for (int64_t e : shape) elements *= e;
        extra = elements * dtypeBytes(gemm.a().buffer->dtype);
    }
    return (fragmentsBytes + extra) / 4 / std::max<int64_t>(1, ctx.threads) + 32;
}

// Why the loop's gemms cannot overlap (empty: they can); g1, g2 the two gemms.
std::string overlapIssue(const LoopPlan& plan, const PipelinedKernel& kernel, const LowerContext& ctx, size_t& g1,
                         size_t& g2) {
    const For* n = plan.loop;
    const std::vector<Item>& items = plan.items;
    if (!ctx.target.has(Feature::Wgmma)) return "the target has no wgmma (asynchronous gemms)";
    if (!n->pipeline.order.empty() || !n->pipeline.stage.empty()) return "the loop has 'order'/'stage' lists";
    std::vector<size_t> gemms;
    for (size_t i : plan.byPos) {
        for (const TileOp* op : items[i].fp.ops)
            if (dynamic_cast<const ops::GemmOp*>(op) && !gemmOf(items[i]))
                return "a gemm of the loop runs inside another statement";
        if (gemmOf(items[i])) gemms.push_back(i);
    }
    if (gemms.size() != 2)
        return fmt::format("the loop has {} gemm(s): the overlap takes two, the second reading what the "
                           "statements after the first make of its result",
                           gemms.size());
    g1 = gemms[0];
    g2 = gemms[1];
    for (size_t g : gemms) {
        ops::GemmPlan gp;
        if (std::string why = ops::planWgmma(*gemmOf(items[g]), ctx, gp); !why.empty())
            return fmt::format("'{}' is not a wgmma: {}", gemmOf(items[g])->str(), why);
    }
    const int consumer = items[g1].stage;
    if (items[g2].stage != consumer) return "the two gemms run at different stages";
    const Footprint& second = items[g2].fp;
    for (const BufferNode* b : items[g1].fp.reads)
        if (second.writes.count(b)) return fmt::format("the first gemm reads '{}', which the second writes", b->name);
    // The second gemm is the last statement of its stage, and before the first gemm only the
    // producers touch what it uses: its accesses then keep their order (above).
    bool after = false;
    for (size_t i : plan.byPos) {
        if (i == g2) {
            after = true;
            continue;
        }
        if (after && items[i].stage == consumer)
            return fmt::format("statements follow '{}' in the loop", gemmOf(items[g2])->str());
        if (i == g1) break;
        if (items[i].stage != consumer) continue;
        for (const auto* set : {&second.reads, &second.writes})
            for (const BufferNode* b : *set)
                if (b->scope != MemScope::Shared && items[i].fp.touches(b))
                    return fmt::format("a statement before the first gemm uses '{}', which the second gemm uses",
                                       b->name);
    }
    const int64_t registers = registerEstimate(plan, kernel, ctx, g2);
    if (registers > 240)
        return fmt::format("its fragments would take about {} registers a thread with the second gemm's A operand "
                           "held an iteration longer (more than 240)",
                           registers);
    // One more version of every stage tile (the TMA tiles share their barriers).
    std::map<const BufferNode*, int> versions;
    for (const auto& [b, nb] : kernel.versioned)
        if (const int64_t* v = asConstInt(nb->shape[0])) versions[b] = int(*v);
    for (const auto& it : items)
        if (it.stage < consumer)
            if (const auto* t = it.stmt.as<TileOpStmt>())
                for (const Region* r : t->op->writes())
                    if (r->buffer->scope == MemScope::Shared) versions[r->buffer.get()] = plan.last + 2;
    const int64_t bytes = plannedSharedBytes(kernel.body, versions, true);
    if (bytes > ctx.target.sharedMemPerBlock)
        return fmt::format("its stage tiles would need {} versions, {} bytes of shared memory where the target "
                           "allows {}",
                           plan.last + 2, bytes, ctx.target.sharedMemPerBlock);
    return "";
}

} // namespace

void planOverlap(LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx) {
    const For* n = plan.loop;
    if (n->pipeline.overlap != 1) return;
    size_t g1 = plan.items.size(), g2 = plan.items.size();
    std::string why = overlapIssue(plan, kernel, ctx, g1, g2);
    const std::string subject = fmt::format("gemm overlap of the loop over {}", n->var->name);
    if (!why.empty()) {
        // A portable kernel may ask for it: targets without wgmma log it without a warning.
        if (ctx.target.has(Feature::Wgmma)) ctx.diags.report(DiagId::warn_overlap_unsuitable, SourceRange(n->loc), why);
        ctx.decide(subject, "none", "lowering (overlap = true)", why, n->loc);
        return;
    }
    std::vector<Item>& items = plan.items;
    items[g2].stage = ++plan.last;
    // G2 right after G1 in the step.
    std::vector<size_t> order;
    for (size_t i : plan.byPos) {
        if (i == g2) continue;
        order.push_back(i);
        if (i == g1) order.push_back(g2);
    }
    plan.byPos = order;
    for (size_t p = 0; p < order.size(); ++p) items[order[p]].pos = int(p);
    plan.overlap.first = g1;
    plan.overlap.second = g2;
    for (const auto* set : {&items[g2].fp.reads, &items[g2].fp.writes})
        for (const BufferNode* b : *set)
            if (b->scope != MemScope::Shared) plan.overlap.carried.insert(b);
    ctx.decide(subject,
               fmt::format("'{}' of iteration k - 1 issued after '{}' of k, waited for after the statements "
                           "between them",
                           gemmOf(items[g2])->str(), gemmOf(items[g1])->str()),
               "lowering (overlap = true)",
               "the statements between the gemms run while the second gemm of the previous iteration does; it "
               "moves one stage later (its stage tiles get one more version)",
               n->loc);
}

// Every stage tile gets the versions the latest reader needs: the TMA tiles share one pair of
// barriers per version.
void equalizeOverlapVersions(LoopPlan& plan) {
    if (!plan.overlap.used()) return;
    int most = 0;
    for (const auto& [b, v] : plan.versions)
        if (v.async) most = std::max(most, v.count);
    for (auto& [b, v] : plan.versions)
        if (v.async) v.count = most;
}

// Gemm g of the overlap in a step: issued without a wait, and, with ping-pong, the two gemms one
// turn when both are in the step.
Stmt overlapGemm(const LoopPlan& plan, const Stmt& instance, size_t g, bool bothInStep) {
    const auto* t = instance.as<TileOpStmt>();
    auto gemm = static_cast<const ops::GemmOp*>(t->op.get())->withoutWait();
    if (plan.pingPong.used() && bothInStep)
        gemm = gemm->withTurn(plan.pingPong.warpgroups, plan.pingPong.firstBarrier, g == plan.overlap.first,
                              g == plan.overlap.second);
    return tileOp(gemm, t->loc);
}

// The wait for gemm g's group (pending: the groups issued after it that may stay in flight).
Stmt overlapWait(const LoopPlan& plan, size_t g, int64_t pending) {
    const auto* gemm = static_cast<const ops::GemmOp*>(plan.items[g].stmt.as<TileOpStmt>()->op.get());
    return tileOp(std::make_shared<ops::WgmmaDrainOp>(gemm->c(), pending), plan.loop->loc);
}

} // namespace tlc::pipeline

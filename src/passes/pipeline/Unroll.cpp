// K-step unrolling (docs/lowering.md, "Unrolling the k-step"). Every step of a pipelined TMA /
// wgmma loop pays a fixed cost whatever its k-tile's width: the consumers wait on `full`, set up
// descriptors, fence (proxy, operands, wgmma), commit, wait for the previous group and arrive on
// `empty`; the producer waits on `empty`, announces the bytes and issues the loads. With a group
// in flight that cost hides behind the group's tensor work only when the group carries enough:
// TileLang's 128 x 128 x 32 f16 tiles give one warpgroup 4 wgmmas of m64n128k16, ~140 ns at the
// SM's peak, and ran 12-25% behind block_K = 64 at the same depth on an H200 (issue 43). A loop
// whose k-tile carries less than the target's `k_step_min_ns` (profile datum) issues U k-tiles'
// wgmmas as one group (U stages waited for, one group committed, wait_group<1>, U stages
// released one group later): UnrolledSteps.cpp emits it. Here: the choice of U before the depth
// is chosen (Depth.cpp counts s - U stages in flight for it), and once it is, the stages made a
// multiple of U and at least 2U (a group in flight and one being issued), or the unroll dropped.
#include "passes/pipeline/Depth.h"
#include "passes/pipeline/LoopPlan.h"

#include "ops/gemm/Gemm.h"
#include "ops/gemm/GemmPlan.h"
#include "ops/gemm/GemmWgmma.h"
#include "ops/OpUtil.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tlc::pipeline {

using namespace ir;

namespace {

// The most k-tiles one group covers: past 4 the stages (2U at least) crowd shared memory and
// the group's share of registers for descriptors grows while the fixed cost is long amortised.
constexpr int kMaxUnroll = 4;

// Why the loop cannot take the unrolled schedule (empty when it can): its steps must be the
// TMA loads at stage 0 and the one gemm whose group stays in flight at the last stage, nothing
// else (a statement between them would run U times per step in an order the schedule does not
// know), counting from 0.
std::string unrollIssue(const LoopPlan& plan, const LowerContext& ctx) {
    const size_t m = plan.items.size();
    if (!plan.tma.used()) return "none of its copies is a TMA load";
    if (plan.inFlight == m) return "no gemm of the loop keeps its wgmma group in flight (see 'wgmma group of ...')";
    for (size_t i = 0; i < m; ++i) {
        const Item& it = plan.items[i];
        if (it.tma && it.stage == 0) continue;
        if (i == plan.inFlight && it.stage == plan.last) continue;
        const SourceLoc at = it.stmt->loc;
        return it.async ? fmt::format("'{}' of the loop stays cp.async", fillOf(it)->str())
                        : fmt::format("the loop runs another statement than its TMA loads and its gemm{}",
                                      at.valid() ? fmt::format(" (line {})", at.line) : std::string());
    }
    return "";
}

} // namespace

void chooseUnroll(LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx) {
    plan.unroll = 1;
    plan.unrollWhy.clear();
    const For* n = plan.loop;
    const int asked = n->pipeline.unroll;  // 0: the compiler's choice; 1: never; U: U k-tiles a group
    const Target& t = ctx.target;
    // Targets without wgmma have no groups to unroll: `unroll` means nothing there (as `deepen`
    // on targets without a latency), and nothing is logged.
    if (!t.has(Feature::Wgmma) || (t.kStepMinNs <= 0 && asked < 2)) return;
    if (std::string why = unrollIssue(plan, ctx); !why.empty()) {
        if (asked >= 2) ctx.diags.report(DiagId::warn_unroll_unsuitable, SourceRange(n->loc), asked, why);
        // A loop that is not a TMA / wgmma pipeline at all is not a choice worth logging.
        if (plan.tma.used() || asked >= 2) plan.unrollWhy = why;
        return;
    }
    const ops::GemmOp& gemm = *gemmOf(plan.items[plan.inFlight]);
    ops::GemmPlan g;
    ops::planWgmma(gemm, ctx, g);
    const std::vector<int64_t> a = ops::matrixExtents(gemm.a()), c = ops::matrixExtents(gemm.c());
    const int64_t K = gemm.transposeA() ? a[0] : a[1];
    const int64_t wgmmas = K / g.wgmma->k * g.tilesM * int64_t(g.wgmmaN.size());
    const double flops = 2.0 * double(c[0]) * double(c[1]) * double(K);
    const double perNs = t.peakFor(gemm.a().buffer->dtype) * 1e3 / std::max(t.smCount, 1);  // one SM at peak
    const double ns = flops / perNs;
    const std::string type = std::string(dtypeName(gemm.a().buffer->dtype));
    std::string work = fmt::format("one k-tile ({} of K) is {} wgmma{} a warpgroup ({:.2f} MFLOP of {} gemm), {:.0f} ns "
                                   "at the {} peak of an SM",
                                   K, wgmmas, wgmmas == 1 ? "" : "s", flops / 1e6, type, ns, type);
    int model = 1;
    if (t.kStepMinNs > 0)
        model = std::clamp(int(std::ceil(t.kStepMinNs / ns - 1e-9)), 1, kMaxUnroll);
    // A loop of at most c k-tiles (a split's range) holds c versions at most: two groups of U
    // must fit in them.
    std::optional<DepthModel> dm = depthModel(plan, kernel);
    std::string capped;
    if (dm && dm->trips && model > std::max<int64_t>(*dm->trips / 2, 1)) {
        model = int(std::max<int64_t>(*dm->trips / 2, 1));
        capped = fmt::format(" (the loop runs at most {} k-tiles: two groups must fit in them)", *dm->trips);
    }
    std::string target = t.kStepMinNs > 0 ? fmt::format("{:.0f} ns a group should carry (k_step_min_ns of target '{}') "
                                                         "to hide a step's fixed cost (waits on full, descriptors and "
                                                         "fences, commit, wait_group<1>, the releases on empty, the "
                                                         "producer's expect_tx and TMA issue) behind the group in "
                                                         "flight",
                                                         t.kStepMinNs, t.name)
                                           : "the target gives no k_step_min_ns";
    if (asked >= 2) {
        plan.unroll = asked;
        plan.unrollWhy = fmt::format("unroll = {}: {}; the model ({}) would take {}", asked, work, target, model);
    } else if (asked == 1) {
        plan.unrollWhy = fmt::format("unroll = 1 keeps one k-tile a group: {}; the model ({}) would take {}", work,
                                     target, model);
    } else {
        plan.unroll = model;
        plan.unrollWhy = model > 1  ? fmt::format("{}, below the {}: {} k-tiles a group ({:.0f} ns){}", work, target,
                                                  model, ns * model, capped)
                         : capped.empty() ? fmt::format("{}, at least the {}", work, target)
                                          : fmt::format("{}, below the {}; one k-tile a group{}", work, target, capped);
    }
}

void settleUnroll(LoopPlan& plan, const PipelinedKernel& kernel, StageInference& inference, LowerContext& ctx) {
    if (plan.unrollWhy.empty()) return;
    const For* n = plan.loop;
    const int U = plan.unroll;
    std::string why = plan.unrollWhy;
    auto suits = [U](int s) { return s % U == 0 && s >= 2 * U; };
    if (U > 1) {
        const int stages = plan.last + 1;
        const bool pinned = n->pipeline.deepen == 0;
        int chosen = stages;
        if (!suits(stages) && !pinned) {
            // The fewest stages from these up that suit it, within what deepening may take
            // (the most it deepens to, lowering's retry cap, the pool fitting a block), else
            // the most below that do.
            int most = std::max(kMaxDeepStages, stages);
            std::optional<DepthModel> m = depthModel(plan, kernel);
            if (m && m->trips) most = std::min<int>(most, int(std::max<int64_t>(*m->trips, stages)));
            if (plan.inferred >= 0 && size_t(plan.inferred) < inference.caps.size())
                most = std::min(most, inference.caps[size_t(plan.inferred)]);
            auto fits = [&](int s) { return !m || m->planned(s) <= ctx.target.sharedMemPerBlock; };
            chosen = 0;
            for (int s = stages + 1; s <= most && !chosen; ++s)
                if (suits(s) && fits(s)) chosen = s;
            for (int s = stages - 1; s >= 2 * U && !chosen; --s)
                if (suits(s)) chosen = s;
        }
        if (chosen && suits(chosen)) {
            if (chosen != stages) {
                why += fmt::format("; {} stages, {} from {}: a multiple of {} (each group's k-tiles take consecutive "
                                   "versions) and at least {} (one group in flight, one issued)",
                                   chosen, chosen > stages ? "up" : "down", stages, U, 2 * U);
                restage(plan, chosen, pinned, inference);
            } else {
                why += fmt::format("; {} stages hold {} groups", stages, stages / U);
            }
        } else {
            why += fmt::format("; not unrolled: {} stages{} are not a multiple of {} of at least {}", stages,
                               pinned ? " ('deepen = false')" : " (and no count that is fits)", U, 2 * U);
            plan.unroll = 1;
            if (n->pipeline.unroll >= 2)
                ctx.diags.report(DiagId::warn_unroll_unsuitable, SourceRange(n->loc), n->pipeline.unroll,
                                 fmt::format("{} stages are not a multiple of {} of at least {}", stages, U, 2 * U));
        }
    }
    const int u = plan.unroll;
    ctx.decide(fmt::format("k-step unroll of {}", loopSubject(n)),
               u > 1 ? fmt::format("{} k-tiles per wgmma group", u) : std::string("1 k-tile per wgmma group"),
               n->pipeline.unroll > 0 ? fmt::format("lowering (unroll = {})", n->pipeline.unroll) : "lowering", why,
               n->loc);
}

} // namespace tlc::pipeline

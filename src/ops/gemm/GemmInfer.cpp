#include "ops/gemm/GemmInfer.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::ops {

namespace {

int64_t floorPow2(int64_t x) {
    int64_t p = 1;
    while (p * 2 <= x) p *= 2;
    return p;
}

const char* policyName(GemmPolicy p) {
    switch (p) {
    case GemmPolicy::FullRow: return "full_row";
    case GemmPolicy::FullCol: return "full_col";
    default: return "square";
    }
}

const MmaInstruction* mmaFor(const GemmOp& op, const Target& target) {
    return findMma(target, op.a().buffer->dtype, op.b().buffer->dtype, op.c().buffer->dtype);
}

// By buffer names: the pipeline copies the statement (prologue, steady state, epilogue) with
// different indices; the log and the diagnostics name it once.
std::string subjectOf(const GemmOp& op) {
    return fmt::format("gemm({}, {}, {})", op.a().buffer->name, op.b().buffer->name, op.c().buffer->name);
}

std::string instructionName(const MmaInstruction& m) {
    return fmt::format("mma m16n8k{} {} x {} -> {}", m.k, dtypeName(m.a), dtypeName(m.b), dtypeName(m.c));
}

} // namespace

ThreadsChoice gemmThreads(const GemmOp& op, const Target& target) {
    std::vector<int64_t> c = op.c().squeezedExtents();
    if (c.size() != 2) return {};
    int64_t M = c[0], N = c[1];
    int64_t warp = std::max<int64_t>(target.warpSize, 1);
    int64_t maxThreads = std::max<int64_t>(target.maxThreadsPerBlock, warp);
    if (const MmaInstruction* mma = mmaFor(op, target); mma && warp == 32) {
        // At most 128 f32 accumulators per thread stay in registers beside the operands; at
        // least 4 warps keep the SM's four tensor-core quarters busy; each warp whole tiles.
        int64_t warps = std::clamp<int64_t>(floorPow2(std::max<int64_t>(M * N / (128 * 32), 1)), 4,
                                            std::min<int64_t>(16, maxThreads / 32));
        warps = std::min(warps, floorPow2(std::max<int64_t>((M / 16) * (N / 8), 1)));
        while (warps > 1 && !chooseWarpSplit(M, N, warps, op.policy())) warps /= 2;
        auto split = chooseWarpSplit(M, N, warps, op.policy());
        if (split) {
            int64_t wm = split->first, wn = split->second;
            return {warps * 32,
                    fmt::format("{} splits its {} x {} accumulator over {} warps ({} x {} warps of {} x {}, {} policy; "
                                "{}), {} accumulators per thread",
                                subjectOf(op), M, N, warps, wm, wn, M / wm, N / wn, policyName(op.policy()),
                                instructionName(*mma), M * N / (warps * 32))};
        }
    }
    int64_t threads = std::clamp<int64_t>(floorPow2(std::max<int64_t>(M * N / 64, 1)), warp,
                                          std::max(warp, std::min<int64_t>(256, maxThreads) / warp * warp));
    return {threads, fmt::format("{} runs on SIMT cores on target '{}' (no tensor-core form for {} x {} -> {}): "
                                 "{} x {} accumulators, about 64 per thread, at most 256 threads",
                                 subjectOf(op), target.name, dtypeName(op.a().buffer->dtype),
                                 dtypeName(op.b().buffer->dtype), dtypeName(op.c().buffer->dtype), M, N)};
}

void explainGemmPlan(const GemmOp& op, const GemmPlan& plan, LowerContext& ctx, SourceLoc loc) {
    std::vector<int64_t> c = op.c().squeezedExtents();
    if (c.size() != 2 || ctx.target.backend == Backend::Cpu) return;
    int64_t M = c[0], N = c[1];
    const MmaInstruction* mma = mmaFor(op, ctx.target);
    int64_t warps = ctx.threads / 32;
    std::string subject = subjectOf(op);
    if (plan.kind == GemmPlan::Kind::Wgmma) {
        ctx.decide(subject, describePlan(plan), "lowering",
                   "the target has wgmma and the operands fit it: warpgroups of 128 threads own 64-row blocks of "
                   "the accumulator, B (and A unless it is already in registers) read from shared memory "
                   "through matrix descriptors",
                   loc);
        return;
    }
    if (!plan.wgmmaFallback.empty())
        ctx.decide("wgmma for " + subject, "not used", "lowering", plan.wgmmaFallback, loc);
    if (plan.kind == GemmPlan::Kind::MmaSm80) {
        ctx.decide(subject, fmt::format("{}, {} x {} warps", instructionName(*plan.mma), plan.warpsM, plan.warpsN),
                   "lowering",
                   fmt::format("the target has {}; each warp holds {} x {} of the {} x {} accumulator ({} x {} "
                               "instruction tiles)",
                               instructionName(*plan.mma), M / plan.warpsM, N / plan.warpsN, M, N, plan.tilesM,
                               plan.tilesN),
                   loc);
        if (op.policy() == GemmPolicy::Auto)
            ctx.decide("policy of " + subject, "square", "inferred",
                       fmt::format("'policy' left out: square keeps each warp's tile ({} x {}) closest to square, "
                                   "which reads the fewest operand bytes from shared memory per mma",
                                   M / plan.warpsM, N / plan.warpsN),
                       loc);
        // A fixed policy the split cannot honour: another arrangement was the only one left.
        bool broken = (op.policy() == GemmPolicy::FullRow && plan.warpsN != 1) ||
                      (op.policy() == GemmPolicy::FullCol && plan.warpsM != 1);
        if (broken) {
            bool rows = op.policy() == GemmPolicy::FullRow;
            int64_t extent = rows ? M : N, unit = rows ? 16 : 8;
            int64_t fit = 1;  // the most warps that get whole rows (columns)
            while (extent % (unit * fit * 2) == 0) fit *= 2;
            ctx.diags.report(DiagId::err_gemm_policy_split, SourceRange(loc), policyName(op.policy()), subject,
                             fmt::format("whole {} for each of the {} warps of threads = {} need {} % ({} x {}) == 0, "
                                         "but the accumulator has {} {} (at most {} warps fit: threads = {})",
                                         rows ? "rows" : "columns", warps, ctx.threads, rows ? "M" : "N", unit, warps,
                                         extent, rows ? "rows" : "columns", fit, fit * 32));
        }
        return;
    }
    const MmaInstruction* wanted = mma;
    std::vector<int64_t> a = op.a().squeezedExtents();
    int64_t K = a.size() == 2 ? (op.transposeA() ? a[0] : a[1]) : 0;
    bool couldUseMma = wanted && K % wanted->k == 0 && op.c().buffer->shape.size() == 2;
    std::string why = !wanted ? fmt::format("target '{}' has no tensor-core form for {} x {} -> {}", ctx.target.name,
                                            dtypeName(op.a().buffer->dtype), dtypeName(op.b().buffer->dtype),
                                            dtypeName(op.c().buffer->dtype))
                      : !couldUseMma ? fmt::format("K = {} is not a multiple of the instruction's {}", K, wanted->k)
                                     : fmt::format("threads = {} does not split the {} x {} accumulator into whole "
                                                   "m16n8 tiles per warp",
                                                   ctx.threads, M, N);
    ctx.decide(subject, "SIMT", "lowering", why, loc);
    if (couldUseMma && !ctx.threadsInferred)
        ctx.diags.report(DiagId::warn_gemm_threads_split, SourceRange(loc), subject, M, N, ctx.threads,
                         ctx.threads % 32 ? fmt::format("{} is not a whole number of 32-thread warps", ctx.threads)
                                          : fmt::format("no warpsM x warpsN = {} has M % (16 warpsM) == 0 and "
                                                        "N % (8 warpsN) == 0",
                                                        warps));
}

} // namespace tlc::ops

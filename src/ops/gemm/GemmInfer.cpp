#include "ops/gemm/GemmInfer.h"
#include "ops/OpUtil.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

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

// The matrix instruction (mma.sync or MFMA) a gemm of these types would use on the target, as
// the numbers and words thread inference and the explanations need: its warp (wave) size, the
// C tile one instruction covers.
struct MatrixForm {
    std::string name;  // "mma m16n8k16 f16 x f16 -> f32", "v_mfma_f32_16x16x16f16"
    int64_t warp, rowUnit, colUnit, k;
    const char* warpWord;   // "warp" / "wave"
    const char* tile;       // "m16n8" / "16 x 16"
    const char* cores;      // "tensor cores" / "matrix cores"
    const char* shortName;  // "mma" / "mfma"
    std::string note = {};  // said after the instruction in --explain
};

std::optional<MatrixForm> matrixForm(const GemmOp& op, const Target& target) {
    DType a = op.a().buffer->dtype, b = op.b().buffer->dtype, c = op.c().buffer->dtype;
    if (const MfmaInstruction* m = findMfma(target, a, b, c); m && target.warpSize == 64) {
        bool fp8 = a == DType::F8E4M3 || a == DType::F8E5M2;
        return MatrixForm{m->instruction, 64, 16, 16, m->k, "wave", "16 x 16", "matrix cores", "mfma",
                          fp8 ? " (tlc's OCP fp8 operands converted to the instruction's FNUZ encoding in registers; "
                                "an infinite e5m2 input reads as NaN)"
                              : ""};
    }
    if (const MmaInstruction* m = findMma(target, a, b, c); m && target.warpSize == 32)
        return MatrixForm{fmt::format("mma m16n8k{} {} x {} -> {}", m->k, dtypeName(m->a), dtypeName(m->b),
                                      dtypeName(m->c)),
                          32, 16, 8, m->k, "warp", "m16n8", "tensor cores", "mma"};
    return std::nullopt;
}

// What a target without a form for the gemm's types lacks, for the explanations.
const char* missingForm(const Target& target) {
    return target.has(Feature::Mfma) ? "matrix-core (MFMA)" : "tensor-core";
}

// By buffer names: the pipeline copies the statement (prologue, steady state, epilogue) with
// different indices; the log and the diagnostics name it once.
std::string subjectOf(const GemmOp& op) {
    return fmt::format("gemm({}, {}, {})", op.a().buffer->name, op.b().buffer->name, op.c().buffer->name);
}

} // namespace

ThreadsChoice gemmThreads(const GemmOp& op, const Target& target) {
    std::vector<int64_t> c = matrixExtents(op.c());
    if (c.size() != 2) return {};
    int64_t M = c[0], N = c[1];
    int64_t warp = std::max<int64_t>(target.warpSize, 1);
    int64_t maxThreads = std::max<int64_t>(target.maxThreadsPerBlock, warp);
    if (auto form = matrixForm(op, target)) {
        // At most 128 f32 accumulators per thread stay in registers beside the operands; at
        // least 4 warps keep the SM's four tensor-core quarters (a CU's four SIMDs) busy; each
        // warp whole instruction tiles.
        int64_t w = form->warp;
        int64_t warps = std::clamp<int64_t>(floorPow2(std::max<int64_t>(M * N / (128 * w), 1)), 4,
                                            std::max<int64_t>(1, std::min<int64_t>(16, maxThreads / w)));
        warps = std::min(warps, floorPow2(std::max<int64_t>((M / form->rowUnit) * (N / form->colUnit), 1)));
        auto split = [&](int64_t parts) {
            return chooseWarpSplit(M, N, parts, op.policy(), form->rowUnit, form->colUnit);
        };
        while (warps > 1 && !split(warps)) warps /= 2;
        if (auto s = split(warps)) {
            int64_t wm = s->first, wn = s->second;
            return {warps * w,
                    fmt::format("{} splits its {} x {} accumulator over {} {}s ({} x {} {}s of {} x {}, {} policy; "
                                "{}), {} accumulators per thread",
                                subjectOf(op), M, N, warps, form->warpWord, wm, wn, form->warpWord, M / wm, N / wn,
                                policyName(op.policy()), form->name, M * N / (warps * w))};
        }
    }
    int64_t threads = std::clamp<int64_t>(floorPow2(std::max<int64_t>(M * N / 64, 1)), warp,
                                          std::max(warp, std::min<int64_t>(256, maxThreads) / warp * warp));
    return {threads, fmt::format("{} runs on SIMT cores on target '{}' (no {} form for {} x {} -> {}): "
                                 "{} x {} accumulators, about 64 per thread, at most 256 threads",
                                 subjectOf(op), target.name, missingForm(target), dtypeName(op.a().buffer->dtype),
                                 dtypeName(op.b().buffer->dtype), dtypeName(op.c().buffer->dtype), M, N)};
}

void explainGemmPlan(const GemmOp& op, const GemmPlan& plan, LowerContext& ctx, SourceLoc loc) {
    std::vector<int64_t> c = matrixExtents(op.c());
    if (c.size() != 2 || ctx.target.backend == Backend::Cpu) return;
    int64_t M = c[0], N = c[1];
    int64_t warps = ctx.threads / std::max(ctx.target.warpSize, 1);
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
    std::optional<MatrixForm> form = matrixForm(op, ctx.target);
    if (form && (plan.kind == GemmPlan::Kind::MmaSm80 || plan.kind == GemmPlan::Kind::Mfma)) {
        const char* w = form->warpWord;
        ctx.decide(subject, fmt::format("{}, {} x {} {}s", form->name, plan.warpsM, plan.warpsN, w), "lowering",
                   fmt::format("the target has {}{}; each {} holds {} x {} of the {} x {} accumulator ({} x {} "
                               "instruction tiles)",
                               form->name, form->note, w, M / plan.warpsM, N / plan.warpsN, M, N, plan.tilesM,
                               plan.tilesN),
                   loc);
        if (op.policy() == GemmPolicy::Auto)
            ctx.decide("policy of " + subject, "square", "inferred",
                       fmt::format("'policy' left out: square keeps each {}'s tile ({} x {}) closest to square, "
                                   "which reads the fewest operand bytes from shared memory per {}",
                                   w, M / plan.warpsM, N / plan.warpsN, form->shortName),
                       loc);
        // A fixed policy the split cannot honour: another arrangement was the only one left.
        bool broken = (op.policy() == GemmPolicy::FullRow && plan.warpsN != 1) ||
                      (op.policy() == GemmPolicy::FullCol && plan.warpsM != 1);
        if (broken) {
            bool rows = op.policy() == GemmPolicy::FullRow;
            int64_t extent = rows ? M : N, unit = rows ? form->rowUnit : form->colUnit;
            int64_t fit = 1;  // the most warps that get whole rows (columns)
            while (extent % (unit * fit * 2) == 0) fit *= 2;
            ctx.diags.report(DiagId::err_gemm_policy_split, SourceRange(loc), policyName(op.policy()), subject,
                             fmt::format("whole {} for each of the {} {}s of threads = {} need {} % ({} x {}) == 0, "
                                         "but the accumulator has {} {} (at most {} {}s fit: threads = {})",
                                         rows ? "rows" : "columns", warps, w, ctx.threads, rows ? "M" : "N", unit,
                                         warps, extent, rows ? "rows" : "columns", fit, w, fit * form->warp));
        }
        return;
    }
    std::vector<int64_t> a = matrixExtents(op.a());
    int64_t K = a.size() == 2 ? (op.transposeA() ? a[0] : a[1]) : 0;
    bool couldUseMma = form && K % form->k == 0;
    std::string why = !form ? fmt::format("target '{}' has no {} form for {} x {} -> {}", ctx.target.name,
                                          missingForm(ctx.target),
                                          dtypeName(op.a().buffer->dtype), dtypeName(op.b().buffer->dtype),
                                          dtypeName(op.c().buffer->dtype))
                      : !couldUseMma ? fmt::format("K = {} is not a multiple of the instruction's {}", K, form->k)
                                     : fmt::format("threads = {} does not split the {} x {} accumulator into whole "
                                                   "{} tiles per {}",
                                                   ctx.threads, M, N, form->tile, form->warpWord);
    ctx.decide(subject, "SIMT", "lowering", why, loc);
    if (couldUseMma && !ctx.threadsInferred)
        ctx.diags.report(DiagId::warn_gemm_threads_split, SourceRange(loc), subject, M, N, ctx.threads,
                         ctx.threads % form->warp
                             ? fmt::format("{} is not a whole number of {}-thread {}s", ctx.threads, form->warp,
                                           form->warpWord)
                             : fmt::format("no {}sM x {}sN = {} has M % ({} {}sM) == 0 and N % ({} {}sN) == 0",
                                           form->warpWord, form->warpWord, warps, form->rowUnit, form->warpWord,
                                           form->colUnit, form->warpWord),
                         form->cores);
}

} // namespace tlc::ops

#include "ops/gemm/GemmPlan.h"

#include "ops/gemm/GemmWgmma.h"

#include <fmt/format.h>

#include <cstdlib>

namespace tlc::ops {

using layout::Fragment;
using layout::Term;

namespace {

// The mma.sync forms sm80-class targets offer (PTX ISA, "Warp-level matrix multiply-accumulate
// instructions"), as data: a new form is a row here and a helper in the runtime.
constexpr MmaInstruction kMmaForms[] = {
    {DType::F16, DType::F16, DType::F32, Feature::MmaSm80, 16, "mma_m16n8k16_f32_f16"},
    {DType::BF16, DType::BF16, DType::F32, Feature::MmaSm80, 16, "mma_m16n8k16_f32_bf16"},
    {DType::F16, DType::F16, DType::F16, Feature::MmaSm80, 16, "mma_m16n8k16_f16_f16"},
    {DType::I8, DType::I8, DType::I32, Feature::MmaSm80, 32, "mma_m16n8k32_s32_s8"},
    {DType::F8E4M3, DType::F8E4M3, DType::F32, Feature::MmaFp8, 32, "mma_m16n8k32_f32_e4m3"},
    {DType::F8E5M2, DType::F8E5M2, DType::F32, Feature::MmaFp8, 32, "mma_m16n8k32_f32_e5m2"},
    {DType::F8E4M3, DType::F8E5M2, DType::F32, Feature::MmaFp8, 32, "mma_m16n8k32_f32_e4m3_e5m2"},
    {DType::F8E5M2, DType::F8E4M3, DType::F32, Feature::MmaFp8, 32, "mma_m16n8k32_f32_e5m2_e4m3"},
};

} // namespace

const MmaInstruction* findMma(const Target& target, DType a, DType b, DType c) {
    for (const auto& m : kMmaForms)
        if (m.a == a && m.b == b && m.c == c && target.has(m.feature)) return &m;
    return nullptr;
}

std::optional<std::pair<int64_t, int64_t>> chooseWarpSplit(int64_t M, int64_t N, int64_t parts, GemmPolicy policy,
                                                           int64_t rowUnit, int64_t colUnit, bool tiesToMoreRows) {
    // full_row gives every part whole rows, full_col whole columns, square (and a policy left
    // out) keeps each part's tile close to square.
    std::optional<std::pair<int64_t, int64_t>> best;
    double bestScore = 1e30;
    for (int64_t wm = 1; wm <= parts; wm *= 2) {
        int64_t wn = parts / wm;
        if (wm * wn != parts || M % (rowUnit * wm) != 0 || N % (colUnit * wn) != 0) continue;
        double score;
        switch (policy) {
        case GemmPolicy::FullRow: score = wn == 1 ? 0 : 1; break;
        case GemmPolicy::FullCol: score = wm == 1 ? 0 : 1; break;
        default: score = std::abs(double(M / wm) - double(N / wn)); break;
        }
        if (score < bestScore || (tiesToMoreRows && score == bestScore)) {
            bestScore = score;
            best = std::pair{wm, wn};
        }
    }
    return best;
}

namespace {

// The m16n8 accumulator layout (PTX ISA, "Matrix Fragments for mma.m16n8k16"): in one warp,
// lane = 4 * group + t holds rows group and group + 8, columns 2t and 2t + 1 of a 16 x 8 tile,
// in slots c0..c3.
Fragment m16n8Tile() {
    return Fragment({16, 8}, 32, 4,
                    {{{true, 4, 8, 1}, {false, 2, 2, 8}},     // row: group, + 8 for c2 and c3
                     {{false, 1, 2, 1}, {true, 1, 4, 2}}});   // column: c0 / c1, + 2t
}

} // namespace

// A warp's m16n8 tiles repeat in further slots (row-major), the warps' parts of C over the
// block's warps (warpsM down, then warpsN across).
Fragment mmaAccumulator(int64_t M, int64_t N, int64_t threads, int64_t warpsM, int64_t warpsN) {
    int64_t tilesM = M / (16 * warpsM), tilesN = N / (8 * warpsN);
    return m16n8Tile().repeat(1, tilesN, false)
        .repeat(0, tilesM, false)
        .repeat(0, warpsM, true)
        .repeat(1, warpsN, true)
        .onBlockOf(threads);
}

Fragment wgmmaAccumulator(int64_t M, int64_t N, int64_t threads, int64_t warpgroupsM, int64_t warpgroupsN) {
    int64_t blocks = M / (64 * warpgroupsM), columns = N / warpgroupsN;
    Fragment m64 = m16n8Tile().repeat(1, columns / 8, false).repeat(0, 4, true);  // one warpgroup's m64nN
    return m64.repeat(0, blocks, false)
        .repeat(0, warpgroupsM, true)
        .repeat(1, warpgroupsN, true)
        .onBlockOf(threads);
}

std::string describePlan(const GemmPlan& plan) {
    if (plan.kind == GemmPlan::Kind::Wgmma) {
        std::string widths;
        for (int64_t n : plan.wgmmaN) widths += (widths.empty() ? "" : " + ") + std::to_string(n);
        return fmt::format("wgmma {}: {} x {} warpgroup(s), each {} block(s) of 64 rows x N = {}", plan.wgmma->helper,
                           plan.warpsM, plan.warpsN, plan.tilesM, widths);
    }
    if (plan.wgmmaFallback.empty()) return "";
    std::string form = plan.kind == GemmPlan::Kind::MmaSm80 ? plan.mma->helper : "SIMT";
    return fmt::format("{}, not wgmma: {}", form, plan.wgmmaFallback);
}

GemmPlan planGemm(const GemmOp& op, const LowerContext& ctx) {
    GemmPlan plan;
    std::vector<int64_t> c = op.c().squeezedExtents();
    std::vector<int64_t> a = op.a().squeezedExtents();
    plan.accumulator = layout::defaultFragment(c, ctx.threads);
    if (c.size() != 2 || a.size() != 2) return plan;
    int64_t M = c[0], N = c[1];
    int64_t K = op.transposeA() ? a[0] : a[1];
    if (ctx.target.has(Feature::Wgmma)) {
        plan.wgmmaFallback = planWgmma(op, ctx, plan);
        if (plan.kind == GemmPlan::Kind::Wgmma) return plan;
    }
    const MmaInstruction* mma = findMma(ctx.target, op.a().buffer->dtype, op.b().buffer->dtype, op.c().buffer->dtype);
    int64_t warps = ctx.threads / 32;
    bool fits = mma && ctx.threads % 32 == 0 && K % mma->k == 0 && op.c().buffer->shape.size() == 2;
    if (!fits) return plan;
    auto split = chooseWarpSplit(M, N, warps, op.policy());
    if (!split) return plan;
    int64_t bestM = split->first;
    plan.kind = GemmPlan::Kind::MmaSm80;
    plan.mma = mma;
    plan.warpsM = bestM;
    plan.warpsN = warps / bestM;
    plan.tilesM = M / (16 * plan.warpsM);
    plan.tilesN = N / (8 * plan.warpsN);
    plan.accumulator = mmaAccumulator(M, N, ctx.threads, plan.warpsM, plan.warpsN);
    return plan;
}

} // namespace tlc::ops

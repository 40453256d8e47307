#include "ops/gemm/GemmPlan.h"

#include "ops/OpUtil.h"
#include "ops/gemm/GemmWgmma.h"

#include <fmt/format.h>

#include <algorithm>
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

// The 16 x 16 MFMA forms of CDNA2 (gfx90a) and CDNA3 (gfx942) as data: the profile's
// mma_shapes says which a target has (the i8 form changed from k = 16 to k = 32 in CDNA3;
// CDNA2 names its bf16 form `_1k`). The helpers take fp8 as tlc's OCP types and convert them
// for CDNA3's FNUZ encoding (tl_hip_mfma.h).
constexpr MfmaInstruction kMfmaForms[] = {
    {DType::F16, DType::F16, DType::F32, "mfma.16x16x16.f16", 16, "mfma_f32_16x16x16_f16", "v_mfma_f32_16x16x16f16"},
    {DType::F16, DType::F16, DType::F16, "mfma.16x16x16.f16", 16, "mfma_f16_16x16x16_f16", "v_mfma_f32_16x16x16f16"},
    {DType::BF16, DType::BF16, DType::F32, "mfma.16x16x16.bf16_1k", 16, "mfma_f32_16x16x16_bf16",
     "v_mfma_f32_16x16x16bf16_1k"},
    {DType::BF16, DType::BF16, DType::F32, "mfma.16x16x16.bf16", 16, "mfma_f32_16x16x16_bf16",
     "v_mfma_f32_16x16x16_bf16"},
    {DType::F32, DType::F32, DType::F32, "mfma.16x16x4.f32", 4, "mfma_f32_16x16x4_f32", "v_mfma_f32_16x16x4f32"},
    {DType::I8, DType::I8, DType::I32, "mfma.16x16x16.i8", 16, "mfma_i32_16x16x16_i8", "v_mfma_i32_16x16x16i8"},
    {DType::I8, DType::I8, DType::I32, "mfma.16x16x32.i8", 32, "mfma_i32_16x16x32_i8", "v_mfma_i32_16x16x32_i8"},
    {DType::F8E4M3, DType::F8E4M3, DType::F32, "mfma.16x16x32.fp8", 32, "mfma_f32_16x16x32_e4m3",
     "v_mfma_f32_16x16x32_fp8_fp8"},
    {DType::F8E5M2, DType::F8E5M2, DType::F32, "mfma.16x16x32.fp8", 32, "mfma_f32_16x16x32_e5m2",
     "v_mfma_f32_16x16x32_bf8_bf8"},
    {DType::F8E4M3, DType::F8E5M2, DType::F32, "mfma.16x16x32.fp8", 32, "mfma_f32_16x16x32_e4m3_e5m2",
     "v_mfma_f32_16x16x32_fp8_bf8"},
    {DType::F8E5M2, DType::F8E4M3, DType::F32, "mfma.16x16x32.fp8", 32, "mfma_f32_16x16x32_e5m2_e4m3",
     "v_mfma_f32_16x16x32_bf8_fp8"},
};

} // namespace

const MfmaInstruction* findMfma(const Target& target, DType a, DType b, DType c) {
    if (!target.has(Feature::Mfma)) return nullptr;
    const auto& shapes = target.mmaShapes;
    for (const auto& m : kMfmaForms)
        if (m.a == a && m.b == b && m.c == c && std::find(shapes.begin(), shapes.end(), m.shape) != shapes.end())
            return &m;
    return nullptr;
}

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

// The 16 x 16 MFMA accumulator: lane l holds rows 4 * (l / 16) + r, r = 0..3 in slots 0..3, of
// column l % 16.
Fragment mfma16x16Tile() {
    return Fragment({16, 16}, 64, 4, {{{true, 16, 4, 4}, {false, 1, 4, 1}}, {{true, 1, 16, 1}}});
}

// An instruction's accumulator tile repeated over one warp's part of C (in further slots,
// row-major) and over the block's warps (warpsM down, then warpsN across).
Fragment tiledOverWarps(const Fragment& tile, int64_t M, int64_t N, int64_t threads, int64_t warpsM, int64_t warpsN) {
    int64_t tilesM = M / (tile.shape()[0] * warpsM), tilesN = N / (tile.shape()[1] * warpsN);
    return tile.repeat(1, tilesN, false)
        .repeat(0, tilesM, false)
        .repeat(0, warpsM, true)
        .repeat(1, warpsN, true)
        .onBlockOf(threads);
}

} // namespace

Fragment mfmaAccumulator(int64_t M, int64_t N, int64_t threads, int64_t wavesM, int64_t wavesN) {
    return tiledOverWarps(mfma16x16Tile(), M, N, threads, wavesM, wavesN);
}

Fragment mmaAccumulator(int64_t M, int64_t N, int64_t threads, int64_t warpsM, int64_t warpsN) {
    return tiledOverWarps(m16n8Tile(), M, N, threads, warpsM, warpsN);
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
    if (plan.kind == GemmPlan::Kind::Mfma)
        return fmt::format("{} ({}): {} x {} wave(s), each {} x {} tiles of 16 x 16", plan.mfma->instruction,
                           plan.mfma->helper, plan.warpsM, plan.warpsN, plan.tilesM, plan.tilesN);
    if (plan.wgmmaFallback.empty()) return "";
    std::string form = plan.kind == GemmPlan::Kind::MmaSm80 ? plan.mma->helper : "SIMT";
    return fmt::format("{}, not wgmma: {}", form, plan.wgmmaFallback);
}

GemmPlan planGemm(const GemmOp& op, const LowerContext& ctx) {
    GemmPlan plan;
    std::vector<int64_t> c = matrixExtents(op.c());
    std::vector<int64_t> a = matrixExtents(op.a());
    plan.accumulator = layout::defaultFragment(c, ctx.threads);
    if (c.size() != 2 || a.size() != 2) return plan;
    int64_t M = c[0], N = c[1];
    int64_t K = op.transposeA() ? a[0] : a[1];
    if (ctx.target.has(Feature::Wgmma)) {
        plan.wgmmaFallback = planWgmma(op, ctx, plan);
        if (plan.kind == GemmPlan::Kind::Wgmma) return plan;
    }
    // Whole warps (waves) of `warp` lanes, each whole rowUnit x colUnit instruction tiles of C.
    // (An accumulator with unit dimensions besides M and N gets the layout in its own rank.)
    auto splitOverWarps = [&](int64_t warp, int64_t rowUnit, int64_t colUnit) {
        if (ctx.threads % warp != 0) return false;
        auto split = chooseWarpSplit(M, N, ctx.threads / warp, op.policy(), rowUnit, colUnit);
        if (!split) return false;
        plan.warpsM = split->first;
        plan.warpsN = ctx.threads / warp / split->first;
        plan.tilesM = M / (rowUnit * plan.warpsM);
        plan.tilesN = N / (colUnit * plan.warpsN);
        return true;
    };
    DType ta = op.a().buffer->dtype, tb = op.b().buffer->dtype, tc = op.c().buffer->dtype;
    if (const MfmaInstruction* mfma = findMfma(ctx.target, ta, tb, tc)) {
        if (K % mfma->k != 0 || !splitOverWarps(ctx.target.warpSize, 16, 16)) return plan;
        plan.kind = GemmPlan::Kind::Mfma;
        plan.mfma = mfma;
        plan.accumulator = mfmaAccumulator(M, N, ctx.threads, plan.warpsM, plan.warpsN);
        return plan;
    }
    const MmaInstruction* mma = findMma(ctx.target, ta, tb, tc);
    if (!mma || K % mma->k != 0 || !splitOverWarps(32, 16, 8)) return plan;
    plan.kind = GemmPlan::Kind::MmaSm80;
    plan.mma = mma;
    plan.accumulator = mmaAccumulator(M, N, ctx.threads, plan.warpsM, plan.warpsN);
    return plan;
}

} // namespace tlc::ops

// How a gemm runs on a target: which instruction, how the block's warps split the C tile, and
// the accumulator layout that follows. Layout inference and lowering ask the same plan, so the
// layout inference fixes for C is the one the lowering writes.
#pragma once

#include "layout/Fragment.h"
#include "ops/LowerContext.h"
#include "ops/gemm/Gemm.h"

#include <optional>
#include <utility>

namespace tlc::ops {

// One warp-wide tensor-core instruction of the mma.sync family (m16n8k16 / m16n8k32): its
// operand types, the target feature it needs and the runtime helper that issues it.
struct MmaInstruction {
    DType a, b, c;
    Feature feature;
    int64_t k;           // 16 for 16-bit inputs, 32 for 8-bit ones
    const char* helper;  // tl::<helper>(c, a, b) in the runtime's mma section
    // Input elements per 32-bit register (2 or 4): the fragment tables are written with it.
    int64_t perRegister() const { return 4 / dtypeBytes(a); }
};

// One warpgroup-wide wgmma.mma_async form (m64nNk16 / m64nNk32): operand types and the
// runtime helper, tl::<helper>_ss<N, TransA, TransB> / _rs<N, TransB>.
struct WgmmaInstruction {
    DType a, b, c;
    int64_t k;
    const char* helper;
    bool mnMajor;    // operands may be stored MN-major (the transpose bits: 16-bit types only)
    bool registerA;  // has the rs form (A from registers)
};

// One wave-wide matrix-core instruction of CDNA (v_mfma_*, 64 lanes), in its 16 x 16 x k form
// (AMD matrix instruction calculator; CDNA2/CDNA3 ISA, "Matrix Arithmetic Instructions"): lane
// l holds A[l % 16][kl .. kl + k/4), B[kl .. kl + k/4)[l % 16] with kl = k/4 * (l / 16), and
// the accumulator's rows 4 * (l / 16) .. + 3 of column l % 16. A target offers the forms its
// profile's `mma_shapes` lists.
struct MfmaInstruction {
    DType a, b, c;
    const char* shape;        // as profiles list it: "mfma.16x16x16.f16"
    int64_t k;                // 4 (f32), 16 (16-bit types, i8 on CDNA2), 32 (i8 and fp8 on CDNA3)
    const char* helper;       // tl::<helper>(c, a, b) in tl_hip_mfma.h's mfma section
    const char* instruction;  // the ISA's name, for --explain
    int64_t perLane() const { return k / 4; }  // A (and B) elements each lane holds
};

struct GemmPlan {
    enum class Kind { Simt, MmaSm80, Wgmma, Mfma } kind = Kind::Simt;
    // MmaSm80: m16n8k<k>, warps arranged warpsM x warpsN, each warp holding tilesM x tilesN
    // instruction tiles of C.
    const MmaInstruction* mma = nullptr;
    int64_t warpsM = 1, warpsN = 1, tilesM = 1, tilesN = 1;
    // Wgmma: warpgroups arranged warpsM x warpsN (counted in warpgroups), each holding tilesM
    // row blocks of 64 and N / warpsN columns, issued as instructions of widths `wgmmaN`.
    const WgmmaInstruction* wgmma = nullptr;
    std::vector<int64_t> wgmmaN;
    // Mfma: waves arranged warpsM x warpsN, each holding tilesM x tilesN 16 x 16 tiles of C.
    const MfmaInstruction* mfma = nullptr;
    layout::Fragment accumulator;
    // Why the wgmma form was not taken on a target that has it (--emit=layouts shows it).
    std::string wgmmaFallback;
};

GemmPlan planGemm(const GemmOp& op, const LowerContext& ctx);
// One line on the plan for --emit=layouts: the instruction and split, or why not wgmma.
std::string describePlan(const GemmPlan& plan);

// The mma.sync form of the target for these operand types, or null.
const MmaInstruction* findMma(const Target& target, DType a, DType b, DType c);

// The 16 x 16 MFMA form of the target for these operand types, or null.
const MfmaInstruction* findMfma(const Target& target, DType a, DType b, DType c);

// How `parts` warps (or warpgroups) split an M x N accumulator under the policy: partsM x
// partsN, each part whole tiles of rowUnit x colUnit (m16n8 for mma.sync, 64 x 64 for wgmma),
// or nothing when no arrangement divides it. Equal scores go to the fewest parts down, or with
// tiesToMoreRows to the most.
std::optional<std::pair<int64_t, int64_t>> chooseWarpSplit(int64_t M, int64_t N, int64_t parts, GemmPolicy policy,
                                                           int64_t rowUnit = 16, int64_t colUnit = 8,
                                                           bool tiesToMoreRows = false);

// The layout of an m16n8 accumulator of shape [M, N] spread as warpsM x warpsN warps with
// tilesM x tilesN instruction tiles each. A 16-bit fragment in this layout with warpsN = 1 is
// also a ready A operand of m16n8k16 (two neighbouring C tiles are one A tile): the `rs` form.
layout::Fragment mmaAccumulator(int64_t M, int64_t N, int64_t threads, int64_t warpsM, int64_t warpsN);

// The layout of wgmma m64nN accumulators of shape [M, N] spread as warpgroupsM x warpgroupsN
// warpgroups (PTX ISA, "WGMMA register fragments"): in a warpgroup, warp w holds rows
// 16w..16w+15 of each 64-row block, within the warp as the m16n8 accumulator repeated over
// N / 8 columns; the row blocks of one warpgroup follow in further slots. A 16-bit fragment
// in this layout with warpgroupsN = 1 is the A operand of the rs form.
// The layout of 16 x 16 MFMA accumulators of shape [M, N] spread as wavesM x wavesN waves of
// 64 lanes, tiles repeated in further slots (row-major) as for mma.sync.
layout::Fragment mfmaAccumulator(int64_t M, int64_t N, int64_t threads, int64_t wavesM, int64_t wavesN);

layout::Fragment wgmmaAccumulator(int64_t M, int64_t N, int64_t threads, int64_t warpgroupsM, int64_t warpgroupsN);

} // namespace tlc::ops

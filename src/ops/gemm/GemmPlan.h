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

struct GemmPlan {
    enum class Kind { Simt, MmaSm80 } kind = Kind::Simt;
    // MmaSm80: m16n8k<k>, warps arranged warpsM x warpsN, each warp holding tilesM x tilesN
    // instruction tiles of C.
    const MmaInstruction* mma = nullptr;
    int64_t warpsM = 1, warpsN = 1, tilesM = 1, tilesN = 1;
    layout::Fragment accumulator;
};

GemmPlan planGemm(const GemmOp& op, const LowerContext& ctx);

// The mma.sync form of the target for these operand types, or null.
const MmaInstruction* findMma(const Target& target, DType a, DType b, DType c);

// How `warps` warps split an M x N accumulator of m16n8 tiles under the policy: warpsM x warpsN
// (whole tiles per warp), or nothing when no arrangement divides it.
std::optional<std::pair<int64_t, int64_t>> chooseWarpSplit(int64_t M, int64_t N, int64_t warps, GemmPolicy policy);

// The layout of an m16n8 accumulator of shape [M, N] spread as warpsM x warpsN warps with
// tilesM x tilesN instruction tiles each. A 16-bit fragment in this layout with warpsN = 1 is
// also a ready A operand of m16n8k16 (two neighbouring C tiles are one A tile): the `rs` form.
layout::Fragment mmaAccumulator(int64_t M, int64_t N, int64_t threads, int64_t warpsM, int64_t warpsN);

} // namespace tlc::ops

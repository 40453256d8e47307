// How a gemm runs on a target: which instruction, how the block's warps split the C tile, and
// the accumulator layout that follows. Layout inference and lowering ask the same plan, so the
// layout inference fixes for C is the one the lowering writes.
#pragma once

#include "layout/Fragment.h"
#include "ops/LowerContext.h"
#include "ops/gemm/Gemm.h"

namespace tlc::ops {

struct GemmPlan {
    enum class Kind { Simt, MmaSm80 } kind = Kind::Simt;
    // MmaSm80: m16n8k16, warps arranged warpsM x warpsN, each warp holding tilesM x tilesN
    // instruction tiles of C.
    int64_t warpsM = 1, warpsN = 1, tilesM = 1, tilesN = 1;
    layout::Fragment accumulator;
};

GemmPlan planGemm(const GemmOp& op, const LowerContext& ctx);

} // namespace tlc::ops

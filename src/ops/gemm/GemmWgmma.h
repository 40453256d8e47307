// The wgmma form of gemm (sm90a, feature `wgmma`): planning, the canonical shared layouts its
// operands need, and (GemmWgmma.cpp) the lowering. See docs/lowering.md, "The wgmma form".
#pragma once

#include "ops/gemm/GemmPlan.h"

#include <optional>
#include <string>

namespace tlc::ops {

// Fills `plan` with the wgmma form when one fits the gemm; otherwise leaves it alone and
// returns why not (for GemmPlan::wgmmaFallback).
std::string planWgmma(const GemmOp& op, const LowerContext& ctx, GemmPlan& plan);

// The layout wgmma reads a shared [rows, cols] operand tile in (its last two dimensions):
// rows of S = min(row bytes, 128) bytes swizzled with the S-byte pattern, 8 rows an atom;
// wider rows split into boxes of 128 bytes stored one after the other. Nothing when the rows
// are not a whole swizzle span (32, 64 or a multiple of 128 bytes) or not a multiple of 8.
std::optional<LowerContext::SharedLayout> wgmmaSharedLayout(const ir::Buffer& shared, std::string reason);

} // namespace tlc::ops

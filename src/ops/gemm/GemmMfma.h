// The MFMA form of gemm (gfx90a, gfx942): the lowering is GemmOp::lowerMfma (GemmMfma.cpp); this
// header gives layout inference the shared-memory reads it makes, so that a shared operand's
// layout (row-major, xor swizzle or padding) is chosen for the fewest bank conflicts of those
// reads and of the copies that fill it. See docs/lowering.md, "The MFMA form".
#pragma once

#include "layout/BankConflicts.h"
#include "ops/gemm/GemmPlan.h"

#include <optional>

namespace tlc::ops {

// One k-step of one wave's reads of `shared` (A or B of an MFMA-planned gemm), indices over the
// buffer's shape with leading dimensions at 0. Nothing when the operand is not a whole tile of
// the buffer's last two dimensions.
std::optional<layout::SharedAccess> mfmaOperandAccess(const GemmOp& op, const GemmPlan& plan, const ir::Buffer& shared,
                                                      const LowerContext& ctx);

} // namespace tlc::ops

// How a copy's lowering touches a shared buffer, as a warp-wide access pattern for the
// bank-conflict cost (layout/BankConflicts.h): a fragment side moves each thread's slots, a
// memory-to-memory copy spreads the tile over the threads in vectors (ops/OpUtil.h).
#pragma once

#include "layout/BankConflicts.h"
#include "ops/LowerContext.h"
#include "ops/copy/Copy.h"

#include <optional>

namespace tlc::ops {

// The pattern of `op` on `shared` (one of its regions' buffers), indices over the buffer's
// shape with leading dimensions at 0. Nothing when the region is not whole rows of the
// buffer's last two dimensions, or a fragment side has no layout yet.
std::optional<layout::SharedAccess> sharedAccess(const CopyOp& op, const ir::Buffer& shared, const LowerContext& ctx);

} // namespace tlc::ops

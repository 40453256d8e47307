// A copy from a fragment to global memory through shared memory (the epilogue of a gemm): when
// each thread's pieces of a destination row are short and scattered (an mma accumulator holds
// two consecutive elements per row: a warp's store fills half of every 32-byte sector it
// touches), the fragment is written to a shared tile, and the tile goes to global memory in
// 16-byte vectors that a warp fills whole rows with. The rule is in docs/lowering.md.
#pragma once

#include "ops/copy/Copy.h"

#include <optional>

namespace tlc::ops {

// The staged lowering of `op`, or nothing when the rule says a direct store is as good or
// staging does not fit.
std::optional<ir::Stmt> lowerStagedStore(const CopyOp& op, LowerContext& ctx, SourceLoc loc);

} // namespace tlc::ops

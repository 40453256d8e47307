// A copy from a fragment to global memory through shared memory (the epilogue of a gemm): when
// each thread's pieces of a destination row are short and scattered (an mma accumulator holds
// two consecutive elements per row: a warp's store fills half of every 32-byte sector it
// touches), the fragment is written to a shared tile, and the tile goes to global memory in
// 16-byte vectors that a warp fills whole rows with, or, on targets with TMA, as TMA box stores
// issued by one thread (CopyTmaStore.cpp). The rule is in docs/lowering.md.
#pragma once

#include "ops/copy/Copy.h"

#include <optional>
#include <string>
#include <vector>

namespace tlc::ops {

// The staged lowering of `op`, or nothing when the rule says a direct store is as good or
// staging does not fit.
std::optional<ir::Stmt> lowerStagedStore(const CopyOp& op, LowerContext& ctx, SourceLoc loc);

// Why the staged tile (`tile`, in the destination's type) cannot go to `dst` as TMA box
// stores, in words for --explain; empty when it can.
std::string tmaStoreIssue(const ir::Region& dst, const std::vector<int64_t>& tile, const LowerContext& ctx);
// Stores `stage`, already written by every thread and laid out as TMA reads it
// (ctx.sharedLayouts), to `dst`: every thread fences its writes for the async proxy, a barrier,
// then thread 0 issues one box store per 128-byte column of boxes, commits and waits until
// they have read the tile.
// `deferWait`: a persistent kernel's epilogue leaves out the wait for the stores' reads of the
// staging tile (the next tile's epilogue waits before writing it again, and the kernel after
// its loop over tiles: persistent-grid).
ir::Stmt storeWithTma(const ir::Buffer& stage, const ir::Region& dst, LowerContext& ctx, SourceLoc loc,
                      bool deferWait = false);

} // namespace tlc::ops

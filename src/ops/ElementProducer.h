// A parallel loop that filled a fragment element by element, taken over by the tile op that
// reads the fragment next (passes/FuseReductions.cpp, passes/FuseTileStores.cpp): on the cpu
// the op computes each value where it would have read it, without a pass over the tile.
#pragma once

#include "ir/TileOp.h"
#include "ops/LowerContext.h"

#include <optional>
#include <string>
#include <vector>

namespace tlc::ops {

struct ElementProducer {
    std::vector<ir::VarPtr> vars;   // the loop's variables, one per dimension of the fragment
    ir::Expr value;                 // what the loop stored into the fragment at (vars)
    std::vector<ir::Region> reads;  // the fragments value reads, whole
    bool stores = false;            // the fragment is written too, as the loop wrote it (it has other uses)
};

// `vars = value` as the source text says it, for the ops' str().
std::string producerString(const ir::Buffer& tile, const ElementProducer& p);
// The producer's value at fragment indices `at`, its fragment reads as the cpu's row-major
// locals; nothing when a fragment it reads is not a cpu tile.
std::optional<ir::Expr> producedAt(LowerContext& ctx, const ElementProducer& p, const std::vector<ir::Expr>& at);
// The producer as the parallel loop it was, filling `tile` (where the fused form does not apply).
ir::Stmt producerLoop(LowerContext& ctx, const ElementProducer& p, const ir::Region& tile, SourceLoc loc);

} // namespace tlc::ops

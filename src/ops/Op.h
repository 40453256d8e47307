// A tile op as lowering sees it: the IR's TileOp (what it reads and writes, how passes rewrite
// it; ir/TileOp.h) plus its thread-level code, which needs the lowering's services. Every tile
// op derives from Op, in its own folder under src/ops/; the IR itself knows nothing of lowering.
#pragma once

#include "ir/TileOp.h"

namespace tlc {
class LowerContext;
}

namespace tlc::ops {

class Op : public ir::TileOp {
public:
    // Thread-level code for this op.
    virtual ir::Stmt lower(LowerContext& ctx, SourceLoc loc) const = 0;
};

// The op of a tile-op statement as lowering sees it.
const Op& asOp(const ir::TileOp& op);

} // namespace tlc::ops

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

    // Ops that fill one shared tile from global memory and can be issued ahead of the tile's
    // readers, asynchronously (cp.async where the pieces are 16 bytes), are the software
    // pipeline's producers (passes/pipeline/Producers.cpp): copy and im2col. Such an op names the
    // tile it fills; any other op nothing.
    virtual const ir::Region* asyncFillTile() const { return nullptr; }
    // The same fill issued asynchronously: it starts its loads and leaves committing and waiting
    // for them to the pipeline (cp.async groups). Null where asyncFillTile() is.
    virtual ir::TileOpPtr withAsyncIssue() const { return nullptr; }
};

// The op of a tile-op statement as lowering sees it.
const Op& asOp(const ir::TileOp& op);

} // namespace tlc::ops

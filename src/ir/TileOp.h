// The interface every tile operation implements as IR: what it reads and writes, how passes
// rewrite it, how it prints. Each op lives in its own folder under src/ops/ with its check, its
// layout rule and its lowering per target (ops/Op.h adds the lowering).
#pragma once

#include "ir/Stmt.h"

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace tlc::ir {

// A rectangular part of a buffer: starts (expressions) and constant extents, one per dimension.
struct Region {
    Buffer buffer;
    std::vector<Expr> starts;
    std::vector<int64_t> extents;

    size_t rank() const { return extents.size(); }
    int64_t elements() const;
    // The extents without unit dimensions (TileLang's rank-matching rule).
    std::vector<int64_t> squeezedExtents() const;
    bool coversWholeBuffer() const;
};
Region wholeBuffer(const Buffer& b);  // b must have a constant shape
// The region with every start replaced by fn(start).
Region mapRegion(const Region& r, const std::function<Expr(const Expr&)>& fn);

class TileOp {
public:
    virtual ~TileOp() = default;
    virtual std::string name() const = 0;
    // The regions the op reads and writes (for barrier placement and layout inference).
    virtual std::vector<const Region*> reads() const = 0;
    virtual std::vector<const Region*> writes() const = 0;
    // A copy of the op with every expression replaced by fn(expr).
    virtual std::shared_ptr<const TileOp> mapExprs(const std::function<Expr(const Expr&)>& fn) const = 0;
    // A copy of the op with every region replaced by fn(region), for passes that move a tile
    // into another buffer (the software pipeline's versioned shared buffers put a dimension of
    // extent 1 in front of the tile). Null when the op cannot take it: ops whose lowering
    // depends on the region's dimension numbers keep this default.
    virtual std::shared_ptr<const TileOp> mapRegions(const std::function<Region(const Region&)>& fn) const {
        (void)fn;
        return nullptr;
    }
    // Human-readable form, as in the source: "copy(A[by * 128, k * 32], A_s)".
    virtual std::string str() const = 0;
    // Thread-level code: ops::Op::lower (ops/Op.h).
};
using TileOpPtr = std::shared_ptr<const TileOp>;

std::string regionString(const Region& r);  // "A[by * 128, k * 32]" (full buffers print their name)

} // namespace tlc::ir

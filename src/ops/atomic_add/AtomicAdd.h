// atomic_add(dst, src): adds a tile (or a scalar) element by element into global memory.
#pragma once

#include "ir/TileOp.h"
#include "ops/Op.h"

namespace tlc::ops {

class AtomicAddOp : public Op {
public:
    // `src` is a tile region, or `value` a scalar added to every element of dst.
    AtomicAddOp(ir::Region dst, std::optional<ir::Region> src, ir::Expr value)
        : dst_(std::move(dst)), src_(std::move(src)), value_(std::move(value)) {}

    const ir::Region& dst() const { return dst_; }
    const std::optional<ir::Region>& src() const { return src_; }
    const ir::Expr& value() const { return value_; }

    std::string name() const override { return "atomic_add"; }
    std::vector<const ir::Region*> reads() const override;
    std::vector<const ir::Region*> writes() const override { return {&dst_}; }
    ir::TileOpPtr mapExprs(const std::function<ir::Expr(const ir::Expr&)>& fn) const override;
    ir::TileOpPtr mapRegions(const std::function<ir::Region(const ir::Region&)>& fn) const override;
    std::string str() const override;
    ir::Stmt lower(LowerContext& ctx, SourceLoc loc) const override;

private:
    ir::Region dst_;
    std::optional<ir::Region> src_;
    ir::Expr value_;
};

} // namespace tlc::ops

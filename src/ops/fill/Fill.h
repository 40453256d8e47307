// fill(buf, value) and clear(buf): set every element of a tile.
#pragma once

#include "ir/TileOp.h"
#include "ops/Op.h"

namespace tlc::ops {

class FillOp : public Op {
public:
    FillOp(ir::Region dst, ir::Expr value, bool isClear) : dst_(std::move(dst)), value_(std::move(value)), isClear_(isClear) {}
    const ir::Region& dst() const { return dst_; }
    const ir::Expr& value() const { return value_; }
    bool isClear() const { return isClear_; }

    std::string name() const override { return isClear_ ? "clear" : "fill"; }
    std::vector<const ir::Region*> reads() const override { return {}; }
    std::vector<const ir::Region*> writes() const override { return {&dst_}; }
    ir::TileOpPtr mapExprs(const std::function<ir::Expr(const ir::Expr&)>& fn) const override;
    ir::TileOpPtr mapRegions(const std::function<ir::Region(const ir::Region&)>& fn) const override;
    std::string str() const override;
    ir::Stmt lower(LowerContext& ctx, SourceLoc loc) const override;

private:
    ir::Region dst_;
    ir::Expr value_;
    bool isClear_;
};

} // namespace tlc::ops

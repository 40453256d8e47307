// copy(src, dst): moves a tile between any two of global, shared and fragment memory,
// converting the element type when they differ. Reads past a tensor's end give zero, writes
// past it are dropped.
#pragma once

#include "ir/TileOp.h"

namespace tlc::ops {

class CopyOp : public ir::TileOp {
public:
    CopyOp(ir::Region src, ir::Region dst) : src_(std::move(src)), dst_(std::move(dst)) {}
    const ir::Region& src() const { return src_; }
    const ir::Region& dst() const { return dst_; }

    std::string name() const override { return "copy"; }
    std::vector<const ir::Region*> reads() const override { return {&src_}; }
    std::vector<const ir::Region*> writes() const override { return {&dst_}; }
    ir::TileOpPtr mapExprs(const std::function<ir::Expr(const ir::Expr&)>& fn) const override;
    std::string str() const override;
    ir::Stmt lower(LowerContext& ctx, SourceLoc loc) const override;

private:
    ir::Region src_, dst_;
};

} // namespace tlc::ops

// cumsum(src, dst, dim, reverse): inclusive prefix sums along one dimension. The plain form
// scans each line with one thread, in shared memory.
#pragma once

#include "ir/TileOp.h"
#include "ops/Op.h"

namespace tlc::ops {

class CumsumOp : public Op {
public:
    CumsumOp(ir::Region src, ir::Region dst, int dim, bool reverse)
        : src_(std::move(src)), dst_(std::move(dst)), dim_(dim), reverse_(reverse) {}
    const ir::Region& src() const { return src_; }
    const ir::Region& dst() const { return dst_; }
    int dim() const { return dim_; }
    bool reverse() const { return reverse_; }

    std::string name() const override { return "cumsum"; }
    std::vector<const ir::Region*> reads() const override { return {&src_}; }
    std::vector<const ir::Region*> writes() const override { return {&dst_}; }
    ir::TileOpPtr mapExprs(const std::function<ir::Expr(const ir::Expr&)>& fn) const override;
    std::string str() const override;
    ir::Stmt lower(LowerContext& ctx, SourceLoc loc) const override;

private:
    ir::Region src_, dst_;
    int dim_;
    bool reverse_;
};

} // namespace tlc::ops

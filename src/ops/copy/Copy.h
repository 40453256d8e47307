// copy(src, dst): moves a tile between any two of global, shared and fragment memory,
// converting the element type when they differ. Reads past a tensor's end give zero, writes
// past it are dropped.
//
// An async copy (global to shared, made by the software pipeline, passes/PipelineLoops.cpp) issues
// cp.async where it can and does not wait: the pipeline commits and waits for groups of copies.
#pragma once

#include "ir/TileOp.h"

namespace tlc::ops {

class CopyOp : public ir::TileOp {
public:
    CopyOp(ir::Region src, ir::Region dst, bool async = false)
        : src_(std::move(src)), dst_(std::move(dst)), async_(async) {}
    const ir::Region& src() const { return src_; }
    const ir::Region& dst() const { return dst_; }
    bool async() const { return async_; }
    std::shared_ptr<const CopyOp> withAsync(bool async) const { return std::make_shared<CopyOp>(src_, dst_, async); }

    std::string name() const override { return "copy"; }
    std::vector<const ir::Region*> reads() const override { return {&src_}; }
    std::vector<const ir::Region*> writes() const override { return {&dst_}; }
    ir::TileOpPtr mapExprs(const std::function<ir::Expr(const ir::Expr&)>& fn) const override;
    ir::TileOpPtr mapRegions(const std::function<ir::Region(const ir::Region&)>& fn) const override;
    std::string str() const override;
    ir::Stmt lower(LowerContext& ctx, SourceLoc loc) const override;

private:
    ir::Region src_, dst_;
    bool async_;
};

} // namespace tlc::ops

// im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad): gathers one
// [block_M, block_K] tile of the im2col matrix of an NHWC image into shared memory (TileLang's
// T.im2col). Row m of the matrix is the output pixel (n, oh, ow), column k the filter tap
// (kh, kw, c) = (k / (kernel * C), k / C % kernel, k % C); the tile is rows
// nhw_step * block_M + i and columns c_step * block_K + j. Taps that fall in the padding, rows
// past N * OH * OW and columns past kernel * kernel * C are zero.
#pragma once

#include "ir/TileOp.h"
#include "ops/Op.h"

namespace tlc::ops {

struct Im2ColParams {
    int64_t kernel = 1, stride = 1, dilation = 1, pad = 0;
};

class Im2ColOp : public Op {
public:
    Im2ColOp(ir::Buffer img, ir::Region col, ir::Expr nhwStep, ir::Expr cStep, Im2ColParams p);

    const ir::Region& img() const { return img_; }
    const ir::Region& col() const { return col_; }
    const ir::Expr& nhwStep() const { return nhwStep_; }
    const ir::Expr& cStep() const { return cStep_; }
    const Im2ColParams& params() const { return p_; }

    std::string name() const override { return "im2col"; }
    std::vector<const ir::Region*> reads() const override { return {&img_}; }
    std::vector<const ir::Region*> writes() const override { return {&col_}; }
    ir::TileOpPtr mapExprs(const std::function<ir::Expr(const ir::Expr&)>& fn) const override;
    ir::TileOpPtr mapRegions(const std::function<ir::Region(const ir::Region&)>& fn) const override;
    std::string str() const override;
    ir::Stmt lower(LowerContext& ctx, SourceLoc loc) const override;

private:
    ir::Region img_;  // the whole image (starts 0; extents nominal: its shape is symbolic)
    ir::Region col_;
    ir::Expr nhwStep_, cStep_;
    Im2ColParams p_;
};

} // namespace tlc::ops

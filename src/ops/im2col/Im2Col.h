// im2col(img, col, nhw_step, c_step, kernel, stride, dilation, pad): gathers one
// [block_M, block_K] tile of the im2col matrix of an NHWC image into shared memory (TileLang's
// T.im2col). Row m of the matrix is the output pixel (n, oh, ow), column k the filter tap
// (kh, kw, c) = (k / (kernel * C), k / C % kernel, k % C); the tile is rows
// nhw_step * block_M + i and columns c_step * block_K + j. Taps that fall in the padding, rows
// past N * OH * OW and columns past kernel * kernel * C are zero.
//
// It is a software pipeline's producer (ops::Op::asyncFillTile): issued asynchronously, each
// 16-byte vector of channels is one cp.async whose source size is 0 for taps in the padding and
// rows or columns past the ends (zero-filled, nothing read). The row of a tile element (the
// image position of output pixel nhw_step * block_M + i) does not depend on c_step and the
// column (the filter tap and channel of c_step * block_K + j) not on the row. In a loop over
// c_step the rows are computed once before it (passes/HoistIm2colRows.cpp): an im2col_rows op
// fills a per-thread table (image n, or -1 past the last pixel, and the window's top-left h and
// w of each of the thread's vectors) that the gather reads; the column part costs one division
// by C a vector.
#pragma once

#include "ir/TileOp.h"
#include "ops/Op.h"

#include <optional>

namespace tlc::ops {

struct Im2ColParams {
    int64_t kernel = 1, stride = 1, dilation = 1, pad = 0;
};

class Im2ColOp : public Op {
public:
    Im2ColOp(ir::Buffer img, ir::Region col, ir::Expr nhwStep, ir::Expr cStep, Im2ColParams p, bool async = false);

    const ir::Region& img() const { return img_; }
    const ir::Region& col() const { return col_; }
    const ir::Expr& nhwStep() const { return nhwStep_; }
    const ir::Expr& cStep() const { return cStep_; }
    const Im2ColParams& params() const { return p_; }
    bool async() const { return async_; }

    // A gather from a global image into a shared tile: a pipeline producer.
    const ir::Region* asyncFillTile() const override;
    ir::TileOpPtr withAsyncIssue() const override;
    // The same gather reading its rows from `rows` (im2col_rows' table for vectors of `vec`).
    std::shared_ptr<const Im2ColOp> withRows(ir::Buffer rows, int64_t vec) const;
    const std::optional<ir::Region>& rows() const { return rows_; }

    std::string name() const override { return "im2col"; }
    std::vector<const ir::Region*> reads() const override;
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
    bool async_ = false;  // issued by a pipeline: cp.async, committed and waited for by it
    std::optional<ir::Region> rows_;  // the table of im2col_rows, whole
    int64_t rowsVec_ = 0;             // ... built for vectors of this many elements
};

// im2col_rows(img, rows, nhw_step, ...): the row part of the gathers of im2col(img, col,
// nhw_step, ...) for a [block_M, block_K] tile in vectors of `vec` channels, into the per-thread
// int32 table `rows` (3 entries a vector: n or -1, h0, w0), once before a loop over c_step.
class Im2ColRowsOp : public Op {
public:
    Im2ColRowsOp(ir::Buffer img, ir::Buffer rows, ir::Expr nhwStep, int64_t blockM, int64_t blockK, int64_t vec,
                 Im2ColParams p);
    std::string name() const override { return "im2col_rows"; }
    std::vector<const ir::Region*> reads() const override { return {}; }
    std::vector<const ir::Region*> writes() const override { return {&rows_}; }
    ir::TileOpPtr mapExprs(const std::function<ir::Expr(const ir::Expr&)>& fn) const override;
    ir::TileOpPtr mapRegions(const std::function<ir::Region(const ir::Region&)>& fn) const override;
    std::string str() const override;
    ir::Stmt lower(LowerContext& ctx, SourceLoc loc) const override;

private:
    ir::Buffer img_;
    ir::Region rows_;
    ir::Expr nhwStep_;
    int64_t blockM_, blockK_, vec_;
    Im2ColParams p_;
};

// The vector (channels) a gather of im2col(img, ...) into a [.., blockK] tile of `type` moves as
// far as the image and the tile's width allow (the shared side may allow fewer: the gather
// takes the smaller), 1 for element moves; and the table entries im2col_rows writes for it
// (3 a vector a thread).
int64_t im2colImageVector(LowerContext& ctx, const ir::Buffer& img, DType type, int64_t blockK);
int64_t im2colRowsEntries(const LowerContext& ctx, int64_t blockM, int64_t blockK, int64_t vec);


} // namespace tlc::ops

// reduce_max / reduce_min / reduce_sum / reduce_abssum / reduce_absmax(src, dst, dim, clear):
// reduces a fragment along one dimension into a fragment of the remaining dimensions. Each
// thread reduces what it holds, then threads combine partials with warp shuffles when the
// dimension's threads share a warp, through shared memory otherwise.
#pragma once

#include "ir/TileOp.h"
#include "ops/Op.h"
#include "layout/Fragment.h"
#include "ops/ElementProducer.h"

#include <optional>

namespace tlc::ops {

enum class ReduceKind { Max, Min, Sum, AbsSum, AbsMax };
const char* reduceName(ReduceKind k);

// A parallel loop that filled the source (`for (i, j) in parallel(..) { sq[i, j] = x[i, j] *
// x[i, j] }`) becomes the reduction's ElementProducer: the cpu reduces its values as it
// computes them, without the pass over the source (passes/FuseReductions.cpp). When the source
// has other uses (softmax's `x[i, j] = exp(x[i, j] - m[i])`, read again after the sum) the
// reduction also stores each value into it (`stores`).

// A fragment the cpu's row loops fill from a tensor as they read it (passes/FuseTileLoads.cpp):
// `copy(X[..], x); reduce_max(x, ..)` as one pass. The fragment has the reduction source's
// shape; element (i, j) of it is element (i, j) of the region's tile.
struct ReduceFill {
    ir::Region from;  // in a tensor
    ir::Region tile;  // the whole fragment
    // False: the row loop reads the tensor in place and the tile is not written (nothing reads
    // it later: passes/ReadTilesInPlace.cpp); its lowering on other paths still fills it.
    bool storesTile = true;
};

class ReduceOp : public Op {
public:
    ReduceOp(ir::Region src, ir::Region dst, ReduceKind kind, int dim, bool clear,
             std::optional<ElementProducer> producer = std::nullopt)
        : src_(std::move(src)), dst_(std::move(dst)), kind_(kind), dim_(dim), clear_(clear),
          producer_(std::move(producer)) {}
    const std::optional<ElementProducer>& producer() const { return producer_; }
    // The cpu's next-block prefetch (passes/PrefetchNextBlock.cpp): the tile of a tensor that the
    // block after this one reads, shaped as the source; the row loops prefetch it as they go.
    const std::optional<ir::Region>& prefetchNext() const { return prefetchNext_; }
    std::shared_ptr<const ReduceOp> withPrefetchNext(ir::Region next) const;
    const std::optional<ReduceFill>& fill() const { return fill_; }
    std::shared_ptr<const ReduceOp> withFill(ReduceFill fill) const;
    const ir::Region& src() const { return src_; }
    const ir::Region& dst() const { return dst_; }
    int dim() const { return dim_; }
    ReduceKind kind() const { return kind_; }
    bool clear() const { return clear_; }

    std::string name() const override { return reduceName(kind_); }
    std::vector<const ir::Region*> reads() const override;
    std::vector<const ir::Region*> writes() const override;
    ir::TileOpPtr mapExprs(const std::function<ir::Expr(const ir::Expr&)>& fn) const override;
    std::string str() const override;
    ir::Stmt lower(LowerContext& ctx, SourceLoc loc) const override;

    // The identity element and the combining function, for reuse by other ops.
    static ir::Expr identity(ReduceKind kind, DType t);
    static ir::Expr combine(ReduceKind kind, const ir::Expr& acc, const ir::Expr& value);

private:
    // The destination's indices of a source element's (`source`: one index per source dimension).
    std::vector<ir::Expr> destinationIndices(const layout::Fragment& S, const layout::Fragment& D,
                                             const std::vector<ir::Expr>& source) const;
    // A source element as the reduction takes it: in the accumulator type, its magnitude for abs kinds.
    ir::Expr element(const ir::Expr& value, DType acc) const;
    // One lane's step of lowerCpuRows (acc: the lanes' type).
    ir::Stmt laneStep(LowerContext& ctx, const ir::Buffer& lanes, const ir::Expr& lane, const ir::Expr& v,
                      DType acc) const;
    // The cpu's vectorisable form of step 1 (per-lane partials along the rows); nothing when the
    // tiles do not fit it.
    std::optional<ir::Stmt> lowerCpuRows(LowerContext& ctx, const layout::Fragment& S, const layout::Fragment& D,
                                         const ir::Buffer& src, const ir::Buffer& part, DType acc) const;
    // Prefetches of the next block's tile for the row-loop step at tile offsets `offsets` (a
    // chunk of `count` elements along the row): one a cache line, when that tile lies in its
    // tensor.
    ir::Stmt prefetchAt(const std::vector<ir::Expr>& offsets, int64_t count) const;

    ir::Region src_, dst_;
    ReduceKind kind_;
    int dim_;
    bool clear_;
    std::optional<ElementProducer> producer_;
    std::optional<ir::Region> prefetchNext_;
    std::optional<ReduceFill> fill_;
};

} // namespace tlc::ops

// copy(src, dst): moves a tile between any two of global, shared and fragment memory,
// converting the element type when they differ. Reads past a tensor's end give zero, writes
// past it are dropped.
//
// An async copy (global to shared, made by the software pipeline, passes/pipeline/) issues
// cp.async where it can and does not wait: the pipeline commits and waits for groups of copies.
// A TMA copy (also the pipeline's, on targets with `tma`) is one cp.async.bulk.tensor of the
// whole box, issued by thread 0, whose bytes complete on the mbarrier `tmaBarrier` (CopyTma.cpp).
//
// On the cpu a copy out of a fragment may compute the fragment as it stores it: the parallel
// loop that filled it just before is its `producer` (passes/FuseTileStores.cpp), and each row
// goes to the tensor a cache line at a time, straight from the computed values.
#pragma once

#include "ir/TileOp.h"
#include "ops/Op.h"
#include "layout/SharedLayoutName.h"
#include "ops/ElementProducer.h"
#include "ops/LowerContext.h"

#include <optional>

namespace tlc::ops {

class CopyOp : public Op {
public:
    CopyOp(ir::Region src, ir::Region dst, bool async = false)
        : src_(std::move(src)), dst_(std::move(dst)), async_(async) {}
    const ir::Region& src() const { return src_; }
    const ir::Region& dst() const { return dst_; }
    bool async() const { return async_; }
    std::shared_ptr<const CopyOp> withAsync(bool async) const { return std::make_shared<CopyOp>(src_, dst_, async); }
    // The same copy as a TMA load completing on the barrier element `barrier`, issued by thread
    // 0 (or, `elected`, by whichever thread runs it: a warp-specialised producer).
    // `multicast` > 1: a thread-block cluster of that many blocks shares the tile; this block
    // loads its share of the rows (its rank's) into every block of the cluster (CopyTma.cpp).
    std::shared_ptr<const CopyOp> withTma(ir::Region barrier, bool elected = false, int64_t multicast = 1) const;
    const std::optional<ir::Region>& tmaBarrier() const { return tmaBarrier_; }
    int64_t tmaMulticast() const { return tmaMulticast_; }
    // The same copy computing its source as it stores it.
    std::shared_ptr<const CopyOp> withProducer(ElementProducer producer) const;
    const std::optional<ElementProducer>& producer() const { return producer_; }
    // The same copy moving one element at a time whatever both sides allow: for registers written
    // an element at a time (a general variant's prefetch, pipeline/RegisterPrefetch.cpp), which
    // hipcc keeps in scratch when they are then read as vectors.
    std::shared_ptr<const CopyOp> withElementMoves() const;
    bool elementMoves() const { return elementMoves_; }

    // A copy from global to shared memory (neither a TMA load nor computing its source) is a
    // pipeline producer.
    const ir::Region* asyncFillTile() const override;
    ir::TileOpPtr withAsyncIssue() const override { return withAsync(true); }

    std::string name() const override { return "copy"; }
    std::vector<const ir::Region*> reads() const override;
    std::vector<const ir::Region*> writes() const override;
    ir::TileOpPtr mapExprs(const std::function<ir::Expr(const ir::Expr&)>& fn) const override;
    ir::TileOpPtr mapRegions(const std::function<ir::Region(const ir::Region&)>& fn) const override;
    std::string str() const override;
    ir::Stmt lower(LowerContext& ctx, SourceLoc loc) const override;

private:
    ir::Region src_, dst_;
    bool async_;
    std::optional<ir::Region> tmaBarrier_;
    bool tmaElected_ = false;
    int64_t tmaMulticast_ = 1;
    std::optional<ElementProducer> producer_;
    bool elementMoves_ = false;

    ir::Stmt lowerTma(LowerContext& ctx) const;
    ir::Stmt lowerProduced(LowerContext& ctx, SourceLoc loc) const;
    // The moves of a copy without a producer; `edge`: only the form with per-element guards (the
    // caller has tested that the tile does not lie inside the tensors).
    ir::Stmt lowerMoves(LowerContext& ctx, SourceLoc loc, bool edge) const;
};

// Why a general variant (LowerContext::generalShapes) has no TMA copies, for --explain.
inline constexpr const char* kGeneralNoTma =
    "the kernel's general variant, for shapes and pointers the fast one cannot take, assumes no 16-byte "
    "alignment, which TMA needs";

// Why `copy` cannot be a TMA load on ctx's target, in words for --explain and the emitted
// comment; empty when it can. `annotated` is the layout annotate_layout fixed for the
// destination, if any: the box's rows must be one swizzle span (or 16 bytes, unswizzled).
std::string tmaIssue(const CopyOp& copy, const LowerContext& ctx, std::optional<layout::SharedLayoutName> annotated);
// The box's size in bytes (what the mbarrier expects; all its boxes when the rows are wider
// than one swizzle span).
int64_t tmaBoxBytes(const CopyOp& copy);
// Why a TMA copy cannot be multicast to a cluster of `blocks` blocks, each loading 1/blocks of
// its rows (empty: it can): the share of every block must be whole 8-row swizzle atoms.
std::string tmaMulticastIssue(const CopyOp& copy, int64_t blocks);
// The dimension of a TMA box's tensor its rows run along, for a region of these extents: the
// last one before the innermost (the columns) with an extent other than 1, else the one just
// before the innermost.
size_t tmaRowDimension(const std::vector<int64_t>& extents);
// The layout TMA loads of a shared [.., rows, cols] tile with rows wider than 128 bytes leave:
// boxes of one 128-byte span, 128-byte swizzled, stacked ([cols / boxCols, rows, boxCols]) —
// wgmmaSharedLayout's, so a wgmma operand loaded so needs no other. Nothing when the rows are
// not wider than one span or not whole spans (or not whole 8-row atoms).
std::optional<LowerContext::SharedLayout> tmaBoxedLayout(const ir::Buffer& tile, std::string reason);
// infer-layouts, for a copy pipeline-loops made a TMA load (tmaIssue accepted it): fixes its
// destination's layout to the stacked boxes when its rows are wider than one span, before any
// other rule chooses one.
void claimTmaLayout(const CopyOp& copy, LowerContext& ctx);
// Whether the cpu stores rows of `frag` into `mem` a 64-byte line at a time when the copy
// computes them (CopyOp::producer): the fragment's last dimension is the tile's, the tensor's
// rows are contiguous and each row is whole lines of the tensor's type.
bool storesWholeLines(const ir::Region& frag, const ir::Region& mem);
// The copy s is, when it is neither asynchronous nor a TMA load (the cpu passes' staging copies).
const CopyOp* plainCopy(const ir::Stmt& s);

} // namespace tlc::ops

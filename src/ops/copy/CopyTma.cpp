// copy as a TMA load (cp.async.bulk.tensor, targets with `tma`): which copies qualify, and the
// lowering. TMA moves a box of a row-major tensor of 2 to 5 dimensions into shared memory,
// densely, row after row (a 2-D tile is a box of 1 in the dimensions the tile squeezes), with
// the tensor map's swizzle applied to the 16-byte chunks of every 128-byte line by the shared
// address: chunk ^= (address >> 7) % (S / 16) for a span of S bytes (PTX ISA, "Tensor Swizzling
// Modes"). layout::Swizzle with rows of exactly S bytes and 128 / S rows per pattern value is
// that function when the box starts on an 8 * S boundary, which is why a swizzled box's rows
// must be one span and why TMA destinations are aligned to 8 * S. Rows wider than 128 bytes
// come as several boxes of one 128-byte span each, stacked in shared memory one after the
// other: the canonical layout wgmma reads (tmaBoxedLayout), which infer-layouts gives the
// destination because the copy is TMA (claimTmaLayout), and which the lowering checks.
#include "ops/copy/Copy.h"

#include "ir/Simplify.h"
#include "ops/LowerContext.h"
#include "ops/annotate_layout/AnnotateLayout.h"
#include "ops/gemm/GemmWgmma.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tlc::ops {

using namespace ir;

namespace {

// TMA's element types (CUtensorMapDataType): 8-bit types travel as UINT8.
bool tmaElementType(DType t) {
    switch (t) {
    case DType::Bool:
    case DType::I4:
    case DType::U4: return false;
    default: return true;
    }
}

// What a TMA copy into a whole 2-D shared tile moves: the tile (rows x cols of the source,
// whose dimensions rowDim and colDim span them; the source's other dimensions have extent 1)
// in boxes of rows x boxCols, one per 128-byte column block when the rows are wider than that.
struct Box {
    int64_t rows = 0, cols = 0, boxCols = 0;
    size_t rowDim = 0, colDim = 0;
    int64_t boxes() const { return cols / boxCols; }
};

constexpr int64_t kSpanBytes = 128;  // the widest swizzle span, TMA's 128B mode

Box boxOf(const CopyOp& c) {
    std::vector<int64_t> tile = c.dst().squeezedExtents();
    Box b;
    b.cols = tile.empty() ? 1 : tile.back();
    b.rows = tile.size() >= 2 ? tile[tile.size() - 2] : 1;
    int64_t rowBytes = b.cols * dtypeBytes(c.dst().buffer->dtype);
    b.boxCols = rowBytes > kSpanBytes && rowBytes % kSpanBytes == 0 ? kSpanBytes / dtypeBytes(c.dst().buffer->dtype)
                                                                     : b.cols;
    const std::vector<int64_t>& ext = c.src().extents;
    b.colDim = ext.empty() ? 0 : ext.size() - 1;
    b.rowDim = tmaRowDimension(ext);
    return b;
}

} // namespace

size_t tmaRowDimension(const std::vector<int64_t>& extents) {
    size_t inner = extents.empty() ? 0 : extents.size() - 1;
    for (size_t d = inner; d-- > 0;)
        if (extents[d] != 1) return d;
    return inner == 0 ? 0 : inner - 1;
}

std::optional<LowerContext::SharedLayout> tmaBoxedLayout(const Buffer& tile, std::string reason) {
    std::vector<int64_t> shape;
    if (!constantShape(tile, shape) || shape.size() < 2 || shape.back() * dtypeBytes(tile->dtype) <= kSpanBytes)
        return std::nullopt;
    auto l = wgmmaSharedLayout(tile, std::move(reason));
    if (!l || l->boxCols * dtypeBytes(tile->dtype) != kSpanBytes) return std::nullopt;
    return l;
}

void claimTmaLayout(const CopyOp& copy, LowerContext& ctx) {
    const Buffer& tile = copy.dst().buffer;
    Box box = boxOf(copy);
    if (!copy.tmaBarrier() || box.boxes() == 1) return;
    // The pipeline's prologue and loop hold instances of the same copy: claim once.
    if (auto it = ctx.sharedLayouts.find(tile.get()); it != ctx.sharedLayouts.end() && it->second.boxCols) return;
    auto l = tmaBoxedLayout(tile, fmt::format("TMA loads of {} in 128-byte boxes", tile->name));
    if (!l) throw std::logic_error("tma: no boxed layout for " + tile->name + " (tmaIssue accepted it)");
    ctx.sharedLayouts[tile.get()] = *l;
    ctx.decide(fmt::format("layout of {}", tile->name), l->str(), "inferred",
               fmt::format("TMA loads {}'s rows of {} bytes as {} boxes of one 128-byte span, stored one after the "
                           "other",
                           tile->name, box.cols * dtypeBytes(tile->dtype), box.boxes()));
}

int64_t tmaBoxBytes(const CopyOp& copy) {
    Box b = boxOf(copy);  // every box of the tile
    return b.rows * b.cols * dtypeBytes(copy.dst().buffer->dtype);
}

std::string tmaMulticastIssue(const CopyOp& copy, int64_t blocks) {
    Box b = boxOf(copy);
    if (b.rows % (8 * blocks) != 0)
        return fmt::format("its {} rows do not split into {} shares of whole 8-row swizzle atoms", b.rows, blocks);
    if (copy.dst().starts.size() < 2) return "its destination is not a 2-D tile";
    return "";
}

std::string tmaIssue(const CopyOp& copy, const LowerContext& ctx, std::optional<layout::SharedLayoutName> annotated) {
    const Region& src = copy.src();
    const Region& dst = copy.dst();
    if (!ctx.target.has(Feature::Tma)) return "the target has no TMA";
    if (ctx.generalShapes) return kGeneralNoTma;
    if (src.buffer->scope != MemScope::Global || dst.buffer->scope != MemScope::Shared)
        return "TMA loads go from global to shared memory";
    if (src.buffer->dtype != dst.buffer->dtype)
        return fmt::format("the copy converts {} to {}", dtypeName(src.buffer->dtype), dtypeName(dst.buffer->dtype));
    if (!tmaElementType(src.buffer->dtype)) return fmt::format("TMA has no {} element type", dtypeName(src.buffer->dtype));
    const size_t rank = src.buffer->shape.size();
    if (rank < 2 || rank > 5)
        return fmt::format("'{}' has {} dimension(s); TMA tensor maps have 2 to 5", src.buffer->name, rank);
    const int64_t* inner = asConstInt(src.buffer->strides.back());
    if (!inner || *inner != 1) return fmt::format("the rows of '{}' are not contiguous", src.buffer->name);
    std::vector<int64_t> shape;
    if (!dst.coversWholeBuffer() || !constantShape(dst.buffer, shape) || shape.size() != 2)
        return fmt::format("the destination is not a whole 2-D tile");
    if (src.squeezedExtents() != dst.squeezedExtents()) return "the source region is not the destination's box";
    Box box = boxOf(copy);
    if (src.extents[box.colDim] != box.cols)
        return fmt::format("the tile's rows do not run along the contiguous dimension of '{}'", src.buffer->name);
    int64_t rowBytes = box.cols * dtypeBytes(src.buffer->dtype);
    if (box.rows > 256 || box.boxCols > 256)
        return fmt::format("the box is {} x {} elements; TMA boxes have at most 256 per side", box.rows, box.boxCols);
    if (rowBytes % 16 != 0) return fmt::format("the box's rows are {} bytes, not a multiple of 16", rowBytes);
    if (box.rows % 8 != 0)
        return fmt::format("the box has {} rows; TMA tiles here are whole 8-row swizzle atoms", box.rows);
    if (annotated) {
        if (*annotated == layout::SharedLayoutName::Padded) return "annotate_layout pads its rows; TMA writes boxes densely";
        layout::Swizzle sw = layout::swizzleOf(*annotated, dtypeBytes(src.buffer->dtype));
        if (!sw.isIdentity() && sw.patternBytes() != rowBytes)
            return fmt::format("its rows are {} bytes and annotate_layout asks for {}: TMA's swizzle needs rows of "
                               "exactly one span",
                               rowBytes, spelling(*annotated));
        if (sw.isIdentity() && rowBytes > kSpanBytes)
            return fmt::format("its rows are {} bytes and annotate_layout keeps them whole: TMA would need boxes of "
                               "one 128-byte span stacked",
                               rowBytes);
        return "";
    }
    // The swizzle inference will give the tile is not known yet; TMA's swizzle modes repeat
    // every 32, 64 or 128 bytes, so rows of other widths (96 bytes: 48 bf16) would get one
    // TMA cannot write.
    if (rowBytes < kSpanBytes && (rowBytes & (rowBytes - 1)) != 0)
        return fmt::format("its rows are {} bytes; TMA's swizzles need rows of 16, 32, 64 or 128 bytes", rowBytes);
    // Tensor-core gemms swizzle their shared operands (layout::bankConflictFreeSwizzle): with
    // rows of 16 to 128 bytes that swizzle is a TMA mode. Wider rows come in 128-byte boxes,
    // which infer-layouts then stacks (claimTmaLayout): possible for rows of whole spans.
    if (rowBytes > kSpanBytes && !tmaBoxedLayout(dst.buffer, ""))
        return fmt::format("its rows are {} bytes, wider than a swizzled TMA box's 128 and not whole 128-byte boxes",
                           rowBytes);
    return "";
}

Stmt CopyOp::lowerTma(LowerContext& ctx) const {
    const Buffer& tile = dst_.buffer;  // versioned by the pipeline: [versions, rows, cols]
    Box box = boxOf(*this);
    int64_t boxBytes = box.boxCols * dtypeBytes(tile->dtype);
    LowerContext::SharedLayout chosen;
    if (auto it = ctx.sharedLayouts.find(tile.get()); it != ctx.sharedLayouts.end()) chosen = it->second;
    if (chosen.padElems) throw std::logic_error("tma: a padded destination " + tile->name);
    // The boxes land one after the other: the destination must store them so (claimTmaLayout).
    if (box.boxes() > 1 ? chosen.boxCols != box.boxCols : chosen.boxCols != 0)
        throw std::logic_error("tma: the layout of " + tile->name + " does not stack its boxes");
    // A swizzle TMA cannot produce would be a mistake of the choice in pipeline-loops.
    const layout::Swizzle& sw = chosen.swizzle;
    if (!sw.isIdentity() && (sw.patternBytes() != boxBytes || sw.rowsPerPattern() * boxBytes != 128))
        throw std::logic_error("tma: the swizzle of " + tile->name + " is no TMA mode");
    int swizzleBytes = sw.isIdentity() ? 0 : int(sw.patternBytes());
    int& align = ctx.sharedAlignment[tile.get()];
    align = std::max(align, swizzleBytes ? 8 * swizzleBytes : 128);
    // The box in every dimension of the source: 1 where the tile squeezes it.
    size_t rank = src_.starts.size();
    // Multicast to a cluster of `share` blocks: each loads rows [rank * rows / share, + rows /
    // share) of every box into the same place of every block's tile (the share starts on a
    // whole swizzle atom, so the pattern is the one the whole box would have).
    const int64_t share = tmaMulticast_;
    if (share > 1 && !tmaMulticastIssue(*this, share).empty())
        throw std::logic_error("tma: a multicast of " + tile->name + " the cluster plan did not check");
    const int64_t shareRows = box.rows / share;
    std::vector<int64_t> boxDims(rank, 1);
    boxDims[box.rowDim] = shareRows;
    boxDims[box.colDim] = box.boxCols;
    Buffer map = ctx.tensorMap(src_.buffer, boxDims, swizzleBytes);
    Expr rowOffset = share > 1 ? simplify(call("cluster_ctarank", DType::I32, {}) * shareRows) : intImm(0);

    // One load per box: box j is the tile's columns [j * boxCols, (j + 1) * boxCols), placed
    // where the destination's layout puts that column block. Coordinates go innermost first.
    std::vector<Stmt> loads;
    for (int64_t j = 0; j < box.boxes(); ++j) {
        std::vector<Expr> origin = dst_.starts;
        origin.back() = simplify(origin.back() + j * box.boxCols);
        if (share > 1) origin[origin.size() - 2] = simplify(origin[origin.size() - 2] + rowOffset);
        std::vector<Expr> args{call("address_of", DType::I64, {load(tile, origin)}),
                               call("address_of", DType::I64, {load(map, {})}),
                               call("address_of", DType::I64, {load(tmaBarrier_->buffer, tmaBarrier_->starts)})};
        for (size_t d = rank; d-- > 0;) {
            Expr at = d == box.colDim ? simplify(src_.starts[d] + j * box.boxCols) : src_.starts[d];
            if (share > 1 && d == box.rowDim) at = simplify(at + rowOffset);
            args.push_back(at);
        }
        if (share > 1) args.push_back(intImm((int64_t(1) << share) - 1));  // every block of the cluster
        loads.push_back(evaluate(
            call(fmt::format("tma_load_{}d{}", rank, share > 1 ? "_multicast" : ""), DType::I32, args)));
    }
    Stmt issue = loads.size() == 1 ? loads.front() : seq(loads);
    // One thread issues the copy for the block.
    if (tmaElected_) return issue;
    return ifThenElse(binary(BinaryOp::Eq, ctx.tx(), intImm(0)), issue);
}

} // namespace tlc::ops

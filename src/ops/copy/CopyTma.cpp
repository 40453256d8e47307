// copy as a TMA load (cp.async.bulk.tensor, targets with `tma`): which copies qualify, and the
// lowering. TMA moves a 2-D box of a row-major tensor into shared memory, densely, row after
// row, with the tensor map's swizzle applied to the 16-byte chunks of every 128-byte line by
// the shared address: chunk ^= (address >> 7) % (S / 16) for a span of S bytes (PTX ISA,
// "Tensor Swizzling Modes"). layout::Swizzle with rows of exactly S bytes and 128 / S rows per
// pattern value is that function when the box starts on an 8 * S boundary, which is why a
// swizzled box's rows must be one span and why TMA destinations are aligned to 8 * S.
#include "ops/copy/Copy.h"

#include "ir/Simplify.h"
#include "ops/LowerContext.h"
#include "ops/annotate_layout/AnnotateLayout.h"

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

// The box a copy into a whole 2-D shared tile moves: rows x cols of the source.
struct Box {
    int64_t rows = 0, cols = 0;
};

Box boxOf(const CopyOp& c) {
    std::vector<int64_t> tile = c.dst().squeezedExtents();
    Box b;
    b.cols = tile.empty() ? 1 : tile.back();
    b.rows = tile.size() >= 2 ? tile[tile.size() - 2] : 1;
    return b;
}

} // namespace

int64_t tmaBoxBytes(const CopyOp& copy) {
    Box b = boxOf(copy);
    return b.rows * b.cols * dtypeBytes(copy.dst().buffer->dtype);
}

std::string tmaIssue(const CopyOp& copy, const LowerContext& ctx, std::optional<SharedLayoutName> annotated) {
    const Region& src = copy.src();
    const Region& dst = copy.dst();
    if (!ctx.target.has(Feature::Tma)) return "the target has no TMA";
    if (src.buffer->scope != MemScope::Global || dst.buffer->scope != MemScope::Shared)
        return "TMA loads go from global to shared memory";
    if (src.buffer->dtype != dst.buffer->dtype)
        return fmt::format("the copy converts {} to {}", dtypeName(src.buffer->dtype), dtypeName(dst.buffer->dtype));
    if (!tmaElementType(src.buffer->dtype)) return fmt::format("TMA has no {} element type", dtypeName(src.buffer->dtype));
    if (src.buffer->shape.size() != 2) return fmt::format("'{}' is not a 2-D tensor", src.buffer->name);
    const int64_t* inner = asConstInt(src.buffer->strides.back());
    if (!inner || *inner != 1) return fmt::format("the rows of '{}' are not contiguous", src.buffer->name);
    std::vector<int64_t> shape;
    if (!dst.coversWholeBuffer() || !constantShape(dst.buffer, shape) || shape.size() != 2)
        return fmt::format("the destination is not a whole 2-D tile");
    if (src.extents != shape) return "the source region is not the destination's box";
    Box box = boxOf(copy);
    int64_t rowBytes = box.cols * dtypeBytes(src.buffer->dtype);
    if (box.rows > 256 || box.cols > 256)
        return fmt::format("the box is {} x {} elements; TMA boxes have at most 256 per side", box.rows, box.cols);
    if (rowBytes % 16 != 0) return fmt::format("the box's rows are {} bytes, not a multiple of 16", rowBytes);
    if (box.rows % 8 != 0)
        return fmt::format("the box has {} rows; TMA tiles here are whole 8-row swizzle atoms", box.rows);
    if (annotated) {
        if (*annotated == SharedLayoutName::Padded) return "annotate_layout pads its rows; TMA writes boxes densely";
        layout::Swizzle sw = swizzleOf(*annotated, dtypeBytes(src.buffer->dtype));
        if (!sw.isIdentity() && sw.patternBytes() != rowBytes)
            return fmt::format("its rows are {} bytes and annotate_layout asks for {}: TMA's swizzle needs rows of "
                               "exactly one span",
                               rowBytes, spelling(*annotated));
        return "";
    }
    // Tensor-core gemms swizzle their shared operands (layout::bankConflictFreeSwizzle): with
    // rows of 16 to 128 bytes that swizzle is a TMA mode; wider rows would need several boxes.
    if (rowBytes > 128)
        return fmt::format("its rows are {} bytes, more than a swizzled TMA box's 128", rowBytes);
    return "";
}

Stmt CopyOp::lowerTma(LowerContext& ctx) const {
    const Buffer& tile = dst_.buffer;  // versioned by the pipeline: [versions, rows, cols]
    Box box = boxOf(*this);
    int64_t rowBytes = box.cols * dtypeBytes(tile->dtype);
    layout::Swizzle sw;
    if (auto it = ctx.sharedLayouts.find(tile.get()); it != ctx.sharedLayouts.end()) {
        if (it->second.padElems) throw std::logic_error("tma: a padded destination " + tile->name);
        sw = it->second.swizzle;
    }
    // A swizzle TMA cannot produce would be a mistake of the choice in pipeline-loops.
    if (!sw.isIdentity() && (sw.patternBytes() != rowBytes || sw.rowsPerPattern() * rowBytes != 128))
        throw std::logic_error("tma: the swizzle of " + tile->name + " is no TMA mode");
    int swizzleBytes = sw.isIdentity() ? 0 : int(sw.patternBytes());
    int& align = ctx.sharedAlignment[tile.get()];
    align = std::max(align, swizzleBytes ? 8 * swizzleBytes : 128);
    Buffer map = ctx.tensorMap(src_.buffer, box.rows, box.cols, swizzleBytes);

    std::vector<Expr> origin = dst_.starts;
    size_t n = src_.starts.size();
    Expr issue = call("tma_load_2d", DType::I32,
                      {call("address_of", DType::I64, {load(tile, origin)}), call("address_of", DType::I64, {load(map, {})}),
                       call("address_of", DType::I64, {load(tmaBarrier_->buffer, tmaBarrier_->starts)}),
                       src_.starts[n - 1], src_.starts[n - 2]});
    // One thread issues the copy for the block.
    if (tmaElected_) return evaluate(issue);
    return ifThenElse(binary(BinaryOp::Eq, ctx.tx(), intImm(0)), evaluate(issue));
}

} // namespace tlc::ops

// The staged epilogue's store as TMA box stores (cp.async.bulk.tensor, targets with `tma`): the
// threads write the fragment into the staging tile in the layout TMA reads (a swizzle of one
// span, rows over 128 bytes as 128-byte boxes: the canonical layout wgmma operands use), and
// one thread stores each box. TMA drops the elements outside the tensor, so edge tiles need
// no per-element bounds checks; the launcher builds the destination's tensor map and checks
// TMA's rules (16-byte aligned base and row stride). docs/lowering.md, "The epilogue through
// shared memory".
#include "ops/copy/Epilogue.h"

#include "ops/LowerContext.h"
#include "ops/gemm/GemmWgmma.h"

#include <fmt/format.h>

namespace tlc::ops {

using namespace ir;

std::string tmaStoreIssue(const Region& dst, const std::vector<int64_t>& tile, const LowerContext& ctx) {
    const Buffer& c = dst.buffer;
    if (!ctx.target.has(Feature::Tma)) return "the target has no TMA";
    if (ctx.generalShapes) return kGeneralNoTma;
    if (c->shape.size() < 2 || c->shape.size() > 5)
        return fmt::format("'{}' has {} dimensions; TMA maps have 2 to 5", c->name, c->shape.size());
    const int64_t* inner = asConstInt(c->strides.back());
    if (!inner || *inner != 1) return fmt::format("the rows of '{}' are not contiguous", c->name);
    // 4-bit types are not staged at all; bool has no CUtensorMapDataType.
    if (c->dtype == DType::Bool) return "TMA has no bool element type";
    // The tile's rows and columns are two dimensions of the destination, the columns its
    // innermost; every other dimension of the box is 1.
    if (tile.size() != 2 || dst.extents.back() != tile[1] || dst.extents[tmaRowDimension(dst.extents)] != tile[0] ||
        dst.squeezedExtents() != tile)
        return "the destination is not the tile's box";
    if (tile[0] > 256) return fmt::format("the tile has {} rows; a TMA box has at most 256", tile[0]);
    int64_t rowBytes = tile[1] * dtypeBytes(c->dtype);
    if (tile[0] % 8 != 0 || (rowBytes != 32 && rowBytes != 64 && rowBytes % 128 != 0))
        return fmt::format("the tile is {} rows of {} bytes; swizzled TMA boxes need a multiple of 8 rows of 32, "
                           "64 or a multiple of 128 bytes",
                           tile[0], rowBytes);
    return "";
}

Stmt storeWithTma(const Buffer& stage, const Region& dst, LowerContext& ctx, SourceLoc loc, bool deferWait) {
    const LowerContext::SharedLayout& layout = ctx.sharedLayouts.at(stage.get());
    std::vector<int64_t> tile;
    constantShape(stage, tile);
    int64_t boxCols = layout.boxCols ? layout.boxCols : tile[1];
    int swizzleBytes = int(layout.swizzle.patternBytes());
    // The box in every dimension of the destination: 1 but along the tile's rows and columns.
    const size_t rank = dst.extents.size(), rowDim = tmaRowDimension(dst.extents);
    std::vector<int64_t> box(rank, 1);
    box[rowDim] = tile[0];
    box[rank - 1] = boxCols;
    Buffer map = ctx.tensorMap(dst.buffer, box, swizzleBytes);
    auto addressOf = [](const Buffer& b, std::vector<Expr> at) { return call("address_of", DType::I64, {load(b, at)}); };
    // Boxes side by side along the row: the one at column j * boxCols is stored j boxes into the
    // tile (apply-shared-layouts makes the index [j][0][0]).
    std::vector<Stmt> issue;
    for (int64_t col = 0; col < tile[1]; col += boxCols) {
        std::vector<Expr> args{addressOf(map, {}), addressOf(stage, {intImm(0), intImm(col)})};
        for (size_t d = rank; d-- > 0;)  // coordinates innermost first
            args.push_back(d == rank - 1 ? simplify(dst.starts[d] + intImm(col)) : dst.starts[d]);
        issue.push_back(evaluate(call(fmt::format("tma_store_{}d", rank), DType::I32, args)));
    }
    issue.push_back(evaluate(call("tma_store_commit", DType::I32, {})));
    // The staging bytes may be written again after the next barrier (a later op's scratch, the
    // next iteration of a loop around the copy), which thread 0 reaches only after this wait.
    if (!deferWait) issue.push_back(evaluate(call("tma_store_wait_read", DType::I32, {intImm(0)})));
    return seq({// The writers' st.shared (generic proxy) must be visible to TMA (async proxy).
                evaluate(call("fence_proxy_async_shared", DType::I32, {})), barrier(loc),
                ifThenElse(binary(BinaryOp::Eq, ctx.tx(), intImm(0)), seq(issue, loc), {}, loc)},
               loc);
}

} // namespace tlc::ops

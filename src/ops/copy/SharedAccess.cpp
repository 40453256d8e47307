#include "ops/copy/SharedAccess.h"

#include "ops/OpUtil.h"

#include <algorithm>

namespace tlc::ops {

using namespace ir;

std::optional<layout::SharedAccess> sharedAccess(const CopyOp& op, const Buffer& shared, const LowerContext& ctx) {
    bool isSrc = op.src().buffer.get() == shared.get();
    const Region& mine = isSrc ? op.src() : op.dst();
    const Region& other = isSrc ? op.dst() : op.src();
    std::optional<std::vector<int64_t>> tile = trailingTileShape(mine);
    if (!tile) return std::nullopt;
    const std::vector<int64_t>& shape = *tile;
    size_t rank = mine.rank();
    int64_t rows = shape[rank - 2], cols = shape[rank - 1];
    auto at = [rank](int64_t i, int64_t j) {
        std::vector<int64_t> index(rank, 0);
        index[rank - 2] = i;
        index[rank - 1] = j;
        return index;
    };
    int64_t elemBytes = dtypeBytes(shared->dtype);
    int64_t widest = std::max<int64_t>(1, 16 / elemBytes);

    if (other.buffer->scope == MemScope::Fragment) {
        auto it = ctx.layouts.find(other.buffer.get());
        if (it == ctx.layouts.end() || it->second.rank() != 2 || it->second.shape() != std::vector<int64_t>{rows, cols})
            return std::nullopt;
        int64_t vec = std::max<int64_t>(1, std::min(it->second.vectorWidth(), widest));
        layout::SharedAccess a = layout::fragmentAccess(it->second, ctx.warpSize, vec, op.str());
        auto inner = a.element;
        a.element = [inner, at](int64_t lane, int64_t step) {
            std::vector<int64_t> ij = inner(lane, step);
            return ij.empty() ? ij : at(ij[0], ij[1]);
        };
        return a;
    }
    // Memory to memory: element (it * threads + tx) * vec of the tile, row-major.
    int64_t vec = other.buffer->dtype == shared->dtype ? widestVector(cols, elemBytes) : 1;
    layout::SharedAccess a;
    a.what = op.str();
    a.lanes = std::min(ctx.warpSize, ctx.threads);
    a.warps = std::max<int64_t>(1, ctx.threads / a.lanes);
    a.vec = vec;
    int64_t vectors = rows * cols / vec, threads = ctx.threads;
    a.steps = (vectors + threads - 1) / threads;
    a.element = [=](int64_t lane, int64_t step) {
        int64_t e = (step * threads + lane) * vec;
        return e < rows * cols ? at(e / cols, e % cols) : std::vector<int64_t>{};
    };
    return a;
}

} // namespace tlc::ops

#include "ops/cumsum/Cumsum.h"

#include "ir/Simplify.h"
#include "ops/OpUtil.h"

#include <fmt/format.h>

#include <optional>

namespace tlc::ops {

using namespace ir;

TileOpPtr CumsumOp::mapExprs(const std::function<Expr(const Expr&)>& fn) const {
    Region s = src_, d = dst_;
    for (auto& e : s.starts) e = fn(e);
    for (auto& e : d.starts) e = fn(e);
    return std::make_shared<CumsumOp>(s, d, dim_, reverse_);
}

std::string CumsumOp::str() const {
    return fmt::format("cumsum({}, {}, dim = {}{})", regionString(src_), regionString(dst_), dim_,
                       reverse_ ? ", reverse = true" : "");
}

namespace {

// A shared buffer shaped like the tile (the op's working copy).
Buffer tileBuffer(LowerContext& ctx, const std::string& name, DType t, const std::vector<int64_t>& tile) {
    return ctx.scratch(name, t, tile);
}

// Moves a tile between a region (fragment, shared or global) and a tile-shaped shared buffer.
Stmt exchange(LowerContext& ctx, const Region& r, const Buffer& work, bool intoWork) {
    if (r.buffer->scope == MemScope::Fragment) {
        const auto& f = ctx.layoutOf(r.buffer);
        Buffer local = ctx.localBuffer(r.buffer);
        return fragmentLoop(ctx, f, 1, indexNames(f.rank()), [&](const Expr& slot, const std::vector<Expr>& idx) {
            std::vector<Expr> t;
            for (size_t d : tileDims(r)) t.push_back(idx[d]);
            return intoWork ? store(work, t, cast(work->dtype, load(local, {slot})))
                            : store(local, {slot}, cast(local->dtype, load(work, t)));
        });
    }
    std::vector<int64_t> tile = r.squeezedExtents();
    return distributedLoop(ctx, tile, 1, indexNames(tile.size()), [&](const std::vector<Expr>& off) {
        std::vector<Expr> idx = regionIndices(r, off);
        Expr ok = inBounds(r.buffer, idx);
        if (intoWork) return store(work, off, select(ok, cast(work->dtype, load(r.buffer, idx)), zero(work->dtype)));
        Stmt s = store(r.buffer, idx, cast(r.buffer->dtype, load(work, off)));
        return asConstInt(ok) && *asConstInt(ok) ? s : ifThenElse(ok, s);
    });
}

} // namespace

Stmt CumsumOp::lower(LowerContext& ctx, SourceLoc loc) const {
    std::vector<int64_t> tile = src_.squeezedExtents();
    // `dim` counts the source's dimensions; find it among the tile's.
    std::vector<size_t> dims = tileDims(src_);
    std::optional<size_t> scanDim;  // none when the tile is one element long along `dim`
    for (size_t k = 0; k < dims.size(); ++k)
        if (dims[k] == size_t(dim_)) scanDim = k;
    DType acc = isFloat(dst_.buffer->dtype) ? DType::F32 : (dtypeBits(dst_.buffer->dtype) > 32 ? DType::I64 : DType::I32);
    if (dst_.buffer->dtype == DType::F64) acc = DType::F64;
    Buffer work = tileBuffer(ctx, "scan", acc, tile);

    std::vector<Stmt> steps{comment(str(), loc), barrier(loc), exchange(ctx, src_, work, true), barrier(loc)};
    // Along a dimension of one element the running sums are the elements: no scan, a copy.
    if (scanDim) {
        // One thread per line: every index but the scanned one.
        std::vector<int64_t> lines = tile;
        int64_t length = tile[*scanDim];
        lines[*scanDim] = 1;
        std::vector<std::string> names = indexNames(tile.size());
        steps.push_back(distributedLoop(ctx, lines, 1, names, [&](const std::vector<Expr>& off) {
            VarPtr s = ctx.freshVar("s");
            VarPtr running = ctx.freshVar("running", acc);
            Buffer runningVar = makeBuffer(running->name, acc, MemScope::Local, {});
            std::vector<Expr> at = off;
            at[*scanDim] = reverse_ ? intImm(length - 1) - Expr(s) : Expr(s);
            Stmt step = seq({store(runningVar, {}, load(runningVar, {}) + load(work, at)),
                             store(work, at, load(runningVar, {}))});
            // A general variant keeps the scan rolled: unrolled beside its element loads, ptxas
            // 13.0 spills 4 bytes of a 48-register kernel (tests/run/kernels/cumsum.tl, sm_90a).
            ForKind kind = ctx.generalShapes ? ForKind::Rolled : ForKind::Serial;
            return allocate(runningVar, forLoop(s, intImm(0), intImm(length), kind, step), loc, zero(acc));
        }));
        steps.push_back(barrier(loc));
    }
    steps.push_back(exchange(ctx, dst_, work, false));
    steps.push_back(barrier(loc));
    return simplify(seq(steps, loc), ctx.bounds());
}

} // namespace tlc::ops

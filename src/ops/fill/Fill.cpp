#include "ops/fill/Fill.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ops/OpUtil.h"

#include <fmt/format.h>

namespace tlc::ops {

using namespace ir;

TileOpPtr FillOp::mapExprs(const std::function<Expr(const Expr&)>& fn) const {
    Region d = dst_;
    for (auto& s : d.starts) s = fn(s);
    return std::make_shared<FillOp>(d, fn(value_), isClear_);
}

TileOpPtr FillOp::mapRegions(const std::function<Region(const Region&)>& fn) const {
    return std::make_shared<FillOp>(fn(dst_), value_, isClear_);
}

std::string FillOp::str() const {
    if (isClear_) return fmt::format("clear({})", regionString(dst_));
    return fmt::format("fill({}, {})", regionString(dst_), printExpr(value_));
}

Stmt FillOp::lower(LowerContext& ctx, SourceLoc loc) const {
    Expr value = cast(dst_.buffer->dtype, value_);
    Stmt body;
    if (dst_.buffer->scope == MemScope::Fragment) {
        Buffer local = ctx.localBuffer(dst_.buffer);
        body = fragmentLoop(ctx, ctx.layoutOf(dst_.buffer), 1, {},
                            [&](const Expr& slot, const std::vector<Expr>&) { return store(local, {slot}, value); });
    } else {
        std::vector<int64_t> tile = dst_.squeezedExtents();
        auto element = [&](const std::vector<Expr>& off) {
            std::vector<Expr> idx = regionIndices(dst_, off);
            Stmt s = store(dst_.buffer, idx, value);
            Expr ok = inBounds(dst_.buffer, idx);
            return asConstInt(ok) && *asConstInt(ok) ? s : ifThenElse(ok, s);
        };
        // A local buffer is each thread's own: every thread fills all of it.
        body = dst_.buffer->scope == MemScope::Local ? perThreadLoop(ctx, tile, 1, indexNames(tile.size()), element)
                                                     : distributedLoop(ctx, tile, 1, indexNames(tile.size()), element);
    }
    return seq({comment(str(), loc), body}, loc);
}

} // namespace tlc::ops

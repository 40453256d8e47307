#include "ops/atomic_add/AtomicAdd.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ops/OpUtil.h"

#include <fmt/format.h>

namespace tlc::ops {

using namespace ir;

std::vector<const Region*> AtomicAddOp::reads() const {
    if (src_) return {&*src_};
    return {};
}

TileOpPtr AtomicAddOp::mapExprs(const std::function<Expr(const Expr&)>& fn) const {
    Region d = dst_;
    for (auto& e : d.starts) e = fn(e);
    std::optional<Region> s = src_;
    if (s)
        for (auto& e : s->starts) e = fn(e);
    return std::make_shared<AtomicAddOp>(d, s, value_ ? fn(value_) : value_);
}

TileOpPtr AtomicAddOp::mapRegions(const std::function<Region(const Region&)>& fn) const {
    std::optional<Region> s = src_;
    if (s) s = fn(*s);
    return std::make_shared<AtomicAddOp>(fn(dst_), s, value_);
}

std::string AtomicAddOp::str() const {
    return fmt::format("atomic_add({}, {})", regionString(dst_), src_ ? regionString(*src_) : printExpr(value_));
}

Stmt AtomicAddOp::lower(LowerContext& ctx, SourceLoc loc) const {
    auto add = [&](const std::vector<Expr>& dstIdx, Expr v) {
        Stmt s = store(dst_.buffer, dstIdx, cast(dst_.buffer->dtype, v), loc, StoreKind::AtomicAdd);
        Expr ok = inBounds(dst_.buffer, dstIdx);
        return asConstInt(ok) && *asConstInt(ok) ? s : ifThenElse(ok, s);
    };
    Stmt body;
    if (src_ && src_->buffer->scope == MemScope::Fragment) {
        const auto& f = ctx.layoutOf(src_->buffer);
        Buffer local = ctx.localBuffer(src_->buffer);
        body = fragmentLoop(ctx, f, 1, indexNames(f.rank()), [&](const Expr& slot, const std::vector<Expr>& idx) {
            std::vector<Expr> off;
            for (size_t d : tileDims(*src_)) off.push_back(idx[d]);
            Stmt s = add(regionIndices(dst_, off), load(local, {slot}));
            // Each element is added once, by one replica.
            if (f.replicas() > 1) s = ifThenElse(binary(BinaryOp::Eq, f.replicaOf(ctx.tx()), intImm(0)), s);
            return s;
        });
    } else {
        std::vector<int64_t> tile = src_ ? src_->squeezedExtents() : dst_.squeezedExtents();
        body = distributedLoop(ctx, tile, 1, indexNames(tile.size()), [&](const std::vector<Expr>& off) {
            Expr v = value_;
            if (src_) {
                std::vector<Expr> s = regionIndices(*src_, off);
                v = select(inBounds(src_->buffer, s), cast(dst_.buffer->dtype, load(src_->buffer, s)), zero(dst_.buffer->dtype));
            }
            return add(regionIndices(dst_, off), v);
        });
    }
    return simplify(seq({comment(str(), loc), body}, loc), ctx.bounds());
}

} // namespace tlc::ops

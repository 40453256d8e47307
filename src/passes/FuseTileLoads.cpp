// A tile read from a tensor by the row reduction right after its copy (cpu targets).
// `copy(X[..], x); reduce_max(x, m, dim = 1)` reads the block's tile twice: the copy moves it
// into x, the reduction reads x back. When the reduction reads x element by element in its
// row loop (as its source, or in its fused producer at the element it computes) and x has the
// source's shape, the row loop can fill x as it goes: one pass. The copy's edge case (rows past
// the tensor's end read as zero) stays as it was:
//   if (tile inside X) reduce_max(x, m, dim = 1) filling x from X[..]
//   else { copy(X[..], x); reduce_max(x, m, dim = 1) }
// Runs after prefetch-next-block, which looks for the copy.
#include "passes/Passes.h"
#include "passes/SeqRewriter.h"

#include "ir/Simplify.h"
#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "ops/OpUtil.h"
#include "ops/copy/Copy.h"
#include "ops/reduce/Reduce.h"

#include <fmt/format.h>

namespace tlc {

using namespace ir;

namespace {

class FuseLoads : public SeqRewriter {
public:
    explicit FuseLoads(LowerContext& ctx) : ctx_(ctx) {}

protected:
    std::optional<Stmt> rewritePair(const Stmt& first, const Stmt& second) override {
        const ops::CopyOp* copy = ops::plainCopy(first);
        const TileOpStmt* t = second.as<TileOpStmt>();
        const auto* reduce = t ? dynamic_cast<const ops::ReduceOp*>(t->op.get()) : nullptr;
        if (!copy || !reduce || reduce->fill()) return std::nullopt;
        const Region& from = copy->src();
        const Buffer& tile = copy->dst().buffer;
        const Region& src = reduce->src();
        if (!ops::contiguousTensorRows(from) || tile->scope != MemScope::Fragment ||
            !copy->dst().coversWholeBuffer() || tile->dtype != from.buffer->dtype || !src.coversWholeBuffer() ||
            size_t(reduce->dim()) + 1 != src.rank() || src.extents.back() % 16 != 0 ||
            wholeBuffer(tile).extents != src.extents || from.squeezedExtents() != src.squeezedExtents())
            return std::nullopt;
        // The reduction reads the tile element by element: as its source, in order, or in its
        // producer at the element it computes.
        bool reads = false;
        if (reduce->producer()) {
            // At the element it computes only (or not at all): the step fills that element first.
            const auto& p = *reduce->producer();
            if (!ops::loadsOnlyAt(p.value, tile.get(), &p.vars)) return std::nullopt;
            for (const auto& r : reduce->producer()->reads) reads |= r.buffer == tile;
            if (src.buffer == tile) reads = true;
        } else {
            reads = src.buffer == tile;
        }
        if (!reads) return std::nullopt;
        Expr inside = simplify(ops::tileInside(from), ctx_.bounds());
        const int64_t* known = asConstInt(inside);
        if (known && !*known) return std::nullopt;
        Stmt filling = tileOp(reduce->withFill({from, copy->dst()}), second->loc);
        ctx_.decide(tile->name, fmt::format("filled by {} as it reads it", reduce->name()), "fuse-tile-loads",
                    fmt::format("on the cpu the row loop of {} loads each element of {} from {} and reduces it in "
                                "one pass; the copy remains for tiles at the tensor's edges",
                                reduce->name(), tile->name, regionString(from)),
                    first->loc);
        if (known) return filling;
        return ifThenElse(inside, filling, seq({first, second}, first->loc), first->loc);
    }

private:
    LowerContext& ctx_;
};

} // namespace

Stmt fuseTileLoads(const Stmt& body, LowerContext& ctx) {
    return FuseLoads(ctx).mutate(body);
}

} // namespace tlc

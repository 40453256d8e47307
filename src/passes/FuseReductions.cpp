// Reductions of computed tiles on the cpu. `for (i, j) in parallel(..) { sq[i, j] = x[i, j] *
// x[i, j] }` followed by `reduce_sum(sq, s, dim = 1)` writes a whole tile only for the
// reduction to read it back: on the cpu, where a tile is plain memory, that is two passes over
// it for nothing. When the loop stores only that tile, element by element at its own indices
// (the whole tile; `let`s before the store folded in), from values of fragments, and the
// reduction along the rows is the tile's only other use, the reduction takes the loop's value
// as its source (ops::ElementProducer) and computes it as it goes. The tile stays allocated for
// layout inference; drop-unused-buffers removes it once nothing names it. When the tile has
// other uses (softmax: `x[i, j] = exp(x[i, j] - m[i])`, `reduce_sum(x, ..)`, then x is read
// again) the reduction also stores each value (`stores`): one pass instead of two, the same
// values; the loop's value may then read the tile itself, at the element it writes only.
#include "passes/BufferUses.h"
#include "passes/ElementLoops.h"
#include "passes/Passes.h"
#include "passes/SeqRewriter.h"

#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "ir/Simplify.h"
#include "ops/OpUtil.h"
#include "ops/parallel/Parallel.h"
#include "ops/reduce/Reduce.h"

#include <fmt/format.h>

#include <set>

namespace tlc {

using namespace ir;

namespace {

// The rows the cpu's row reductions take (ReduceOp::lowerCpuRows: a multiple of its 16 lanes):
// other rows are not fused.
constexpr int64_t kRowLanes = 16;

class Fuse : public SeqRewriter {
public:
    Fuse(std::map<const BufferNode*, int> uses, std::set<const BufferNode*> written, LowerContext& ctx)
        : uses_(std::move(uses)), written_(std::move(written)), ctx_(ctx) {}

protected:
    std::optional<Stmt> rewritePair(const Stmt& loop, const Stmt& next) override { return fuse(loop, next); }

private:
    std::map<const BufferNode*, int> uses_;
    std::set<const BufferNode*> written_;
    LowerContext& ctx_;

    std::optional<Stmt> fuse(const Stmt& loop, const Stmt& next) const {
        const TileOpStmt* t = next.as<TileOpStmt>();
        const auto* reduce = t ? dynamic_cast<const ops::ReduceOp*>(t->op.get()) : nullptr;
        if (!reduce || reduce->producer()) return std::nullopt;
        std::optional<ElementLoop> element = elementLoop(loop, written_, ctx_.bounds());
        if (!element) return std::nullopt;
        const auto& [nest, tile, value] = *element;
        const ir::Region& src = reduce->src();
        auto count = uses_.find(tile.get());
        // The loop and the reduction are the tile's only uses, or it is stored too.
        const bool stores = count != uses_.end() && count->second != 2;
        if (src.buffer != tile || !src.coversWholeBuffer() || count == uses_.end() ||
            size_t(reduce->dim()) + 1 != src.rank() || src.extents != nest.extents ||
            src.extents.back() % kRowLanes != 0)
            return std::nullopt;
        // Not stored, the value must not read the tile at all: nothing would have written it.
        if (!stores && !ops::loadsOnlyAt(value, tile.get(), nullptr)) return std::nullopt;
        auto op = std::make_shared<ops::ReduceOp>(src, reduce->dst(), reduce->kind(), reduce->dim(), reduce->clear(),
                                                  element->producer(stores));
        if (stores)
            ctx_.decide(tile->name, "filled by the reduction", "fuse-reductions",
                        fmt::format("the parallel loop fills {} before {} reads it: on the cpu the reduction computes "
                                    "its values, stores them and reduces them in one pass",
                                    tile->name, ops::reduceName(reduce->kind())),
                        loop->loc);
        else
            ctx_.decide(tile->name, "computed inside the reduction", "fuse-reductions",
                        fmt::format("the parallel loop only fills {} for {}: on the cpu the reduction computes its "
                                    "values instead of reading a stored tile",
                                    tile->name, ops::reduceName(reduce->kind())),
                        loop->loc);
        return tileOp(op, next->loc);
    }
};

} // namespace

Stmt fuseReductions(const Stmt& body, LowerContext& ctx) {
    return Fuse(countBufferUses(body), writtenTensors(body), ctx).mutate(body);
}

} // namespace tlc

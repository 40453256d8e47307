// The next block's tile, fetched while this block computes (cpu targets). A row kernel
// (softmax, the norms) reads its block's tile from memory, then computes on it in L1, then
// stores: the memory is idle while it computes. Under `omp for schedule(static)` a thread runs
// consecutive blocks, so the tile the next block will read is known: the block's copy from a
// tensor with `bx + 1` for `bx` (for the grid index the launcher runs innermost: x, unless
// reuse-packed-b chose another). The row reduction that reads the copied tile (the one that
// computes, a fused one, where there are several) prefetches that tile as it goes, a cache line
// per step of its row loop, so the next block's copy finds it in the caches. A prefetch changes
// no value: only where it goes is chosen here (ReduceOp::prefetchAt writes it).
#include "passes/Passes.h"
#include "passes/SeqRewriter.h"

#include "ir/Printer.h"
#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "ops/OpUtil.h"
#include "ops/copy/Copy.h"
#include "ops/reduce/Reduce.h"

#include <fmt/format.h>

namespace tlc {

using namespace ir;

namespace {

const ops::ReduceOp* asReduce(const Stmt& s) {
    const TileOpStmt* t = s.as<TileOpStmt>();
    return t ? dynamic_cast<const ops::ReduceOp*>(t->op.get()) : nullptr;
}

// The copy of a block's tile from a tensor into a whole fragment, the tile's rows contiguous in
// the tensor and moving with the block index `bx`.
bool readsBlockTile(const ops::CopyOp& copy, const Var* bx) {
    const Region& from = copy.src();
    const Region& to = copy.dst();
    if (!ops::contiguousTensorRows(from) || to.buffer->scope != MemScope::Fragment || !to.coversWholeBuffer())
        return false;
    for (const auto& start : from.starts)
        if (uses(start, bx)) return true;
    return false;
}

// A row reduction that reads `tile` (as its source or in its fused producer) over a source of
// the tile's shape: a loop over the tile's elements in row order, where the prefetches go.
bool readsTileByRows(const ops::ReduceOp& r, const Buffer& tile) {
    const Region& src = r.src();
    if (size_t(r.dim()) + 1 != src.rank() || src.squeezedExtents() != wholeBuffer(tile).squeezedExtents()) return false;
    if (src.buffer == tile) return true;
    if (r.producer())
        for (const auto& read : r.producer()->reads)
            if (read.buffer == tile) return true;
    return false;
}

class Prefetch : public SeqRewriter {
public:
    Prefetch(const Var* bx, VarPtr bxVar, LowerContext& ctx) : bx_(bx), bxVar_(std::move(bxVar)), ctx_(ctx) {}

protected:
    void rewriteSequence(const std::vector<Stmt>& stmts, std::set<size_t>&, std::map<size_t, Stmt>& replaced) override {
        for (size_t c = 0; c < stmts.size(); ++c) {
            const ops::CopyOp* copy = ops::plainCopy(stmts[c]);
            if (!copy || !readsBlockTile(*copy, bx_) ||
                copy->src().squeezedExtents() != wholeBuffer(copy->dst().buffer).squeezedExtents())
                continue;
            // The fused reduction (the one that computes) where there is one, else the first.
            std::optional<size_t> host;
            for (size_t r = c + 1; r < stmts.size(); ++r) {
                const ops::ReduceOp* reduce = asReduce(stmts[r]);
                if (!reduce || replaced.count(r) || reduce->prefetchNext() || !readsTileByRows(*reduce, copy->dst().buffer))
                    continue;
                if (!host || (reduce->producer() && !asReduce(stmts[*host])->producer())) host = r;
            }
            if (!host) continue;
            Region next = mapRegion(copy->src(), [&](const Expr& e) {
                return substitute(e, {{bxVar_, Expr(bxVar_) + 1}});
            });
            replaced[*host] = tileOp(asReduce(stmts[*host])->withPrefetchNext(next), stmts[*host]->loc);
            ctx_.decide(copy->src().buffer->name, "next block's tile prefetched", "prefetch-next-block",
                        fmt::format("{} prefetches {} (the tile the thread's next block copies) a cache line per "
                                    "step of its row loop",
                                    asReduce(stmts[*host])->name(), regionString(next)),
                        stmts[*host]->loc);
        }
    }
    // Only the block's own statements: a copy inside a loop moves with that loop, not the block.
    Stmt mutateFor(const For*, const Stmt& self) override { return self; }

private:
    const Var* bx_;
    VarPtr bxVar_;
    LowerContext& ctx_;
};

} // namespace

Stmt prefetchNextBlock(const Kernel& kernel, const Stmt& body, LowerContext& ctx) {
    // The launcher's innermost grid loop moves the index whose next value is the next block's.
    const size_t inner = size_t(kernel.cpuInnerBlockDim);
    if (inner >= kernel.blockVars.size()) return body;
    const VarPtr& bx = kernel.blockVars[inner];
    return Prefetch(bx.get(), bx, ctx).mutate(body);
}

} // namespace tlc

// Persistent kernels (docs/lowering.md, "Persistent kernels"): `grid(..., persistent = true)`
// launches at most one block per SM, and each block loops over the tiles the grid named,
// rasterised in panels of rows for L2 reuse. Two passes: persistent-tiles makes the loop (before
// pipeline-loops, which carries a warp-specialised loop's mbarrier phases across it,
// pipeline/Persistent.cpp); consumer-barriers, after the shared-memory plan, turns the
// consumers' block barriers into a named barrier of their own where a producer warpgroup runs
// on across the tiles (it takes part in no block barrier).
#include "passes/Passes.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

namespace tlc {

using namespace ir;

namespace {

// Panels of this many rows of tiles where the author gave no use_swizzle: the blocks running at
// once walk a panel column by column, so they share the rows of A (a panel's height) and the
// columns of B (a column of the panel) while those are in L2.
constexpr int64_t kRasterPanel = 8;

} // namespace

Stmt persistentTiles(Kernel& k, const Stmt& body, LowerContext& ctx) {
    if (!k.persistent) return body;
    const std::string subject = "persistent grid";
    if (ctx.target.backend == Backend::Cpu) {
        ctx.decide(subject, "no (one block per tile)", "lowering (persistent = true)",
                   "the cpu's launcher runs the blocks as an OpenMP loop over its cores already", k.loc);
        return body;
    }
    const std::vector<Expr> extents = k.gridExtents;
    Expr tiles = extents[0];
    for (size_t i = 1; i < extents.size(); ++i) tiles = tiles * extents[i];
    tiles = simplify(tiles);
    SourceLoc loc = body->loc;
    // The block's index and the grid's size (gridDim.x): the launcher chooses the grid.
    VarPtr block = makeVar(ctx.freshName("block_x"), DType::I32, VarRole::BlockIndexX);
    ctx.reserveName(block->name);
    Expr blocks = call("grid_dim_x", DType::I32, {});
    VarPtr iter = ctx.freshVar("tile_iter"), tile = ctx.freshVar("tile");
    ctx.reserveName(iter->name);
    ctx.reserveName(tile->name);
    // Tile t = block + i * blocks for i in 0 .. ceil((tiles - block) / blocks) - 1.
    Expr trips = simplify((tiles - Expr(block) + blocks - int64_t(1)) / blocks);
    // The tile's coordinates in the grid as the author wrote it (x fastest), rasterised when
    // two-dimensional and use_swizzle did not already rasterise what they feed.
    std::vector<Expr> coords;
    const Expr t(tile);
    std::string raster = "tiles in row-major order";
    if (extents.size() == 2 && k.rasterPanel == 0) {
        const Expr gx = extents[0], gy = extents[1];
        const int64_t p = kRasterPanel;
        Expr panel = t / (gx * p), within = t % (gx * p);
        Expr rows = minExpr(intImm(p), gy - panel * p);
        coords = {within / rows, panel * p + within % rows};
        raster = fmt::format("rasterised in panels of {} rows of tiles, walked column by column (L2 reuse of A's rows "
                             "and B's columns)",
                             p);
    } else {
        Expr rest = t;
        for (size_t i = 0; i < extents.size(); ++i) {
            coords.push_back(i + 1 < extents.size() ? rest % extents[i] : rest);
            rest = rest / extents[i];
        }
        if (k.rasterPanel > 0) raster = fmt::format("rasterised by use_swizzle (panels of {} rows)", k.rasterPanel);
    }
    // The body's block indices become lets of the tile's coordinates.
    std::vector<std::pair<VarPtr, Expr>> rename;
    std::vector<VarPtr> named;
    for (size_t i = 0; i < k.blockVars.size(); ++i) {
        VarPtr v = makeVar(k.blockVars[i]->name, DType::I32);
        rename.push_back({k.blockVars[i], Expr(v)});
        named.push_back(v);
    }
    Stmt inner = substitute(body, rename);
    for (size_t i = named.size(); i-- > 0;) inner = letStmt(named[i], simplify(coords[i]), inner, loc);
    inner = letStmt(tile, simplify(Expr(block) + Expr(iter) * blocks), inner, loc);
    Stmt loop = seq({comment(fmt::format("persistent: this block runs tiles {} + i * gridDim.x of {}", block->name,
                                         printExpr(tiles)),
                             loc),
                     forLoop(iter, intImm(0), trips, ForKind::Serial, inner, loc)},
                    loc);
    // The blocks an SM holds at once are known once shared memory is planned (persistent-grid).
    k.gridExtents = {call("persistent_ctas", DType::I32, {tiles, intImm(1)})};
    k.blockVars = {block};
    ctx.persistentTile = iter;
    ctx.decide(subject, "as many blocks as the SMs hold at once, each looping over tiles",
               "lowering (persistent = true)",
               fmt::format("the launcher sizes the grid to min(tiles, SMs x blocks an SM holds) "
                           "(cudaDevAttrMultiProcessorCount, asked once); {}",
                           raster),
               k.loc);
    return loop;
}

namespace {

// The consumers' branch of the warp-specialised split: `if (tx >= T) producer else consumers`.
class ConsumerBarriers : public IRMutator {
public:
    explicit ConsumerBarriers(const LowerContext& ctx) : ctx_(ctx) {}
    int rewritten = 0;

protected:
    Stmt mutateIfThenElse(const IfThenElse* n, const Stmt& self) override {
        if (inConsumers_ || !isSplit(n->cond)) return IRMutator::mutateIfThenElse(n, self);
        inConsumers_ = true;
        Stmt consumers = mutate(n->elseCase);
        inConsumers_ = false;
        return ifThenElse(n->cond, n->thenCase, consumers, n->loc);
    }
    Stmt mutateBarrier(const Barrier* n, const Stmt& self) override {
        if (!inConsumers_) return self;
        ++rewritten;
        return evaluate(call("named_barrier_sync", DType::I32, {intImm(ctx_.consumerBarrier), intImm(ctx_.threads)}),
                        n->loc);
    }

private:
    const LowerContext& ctx_;
    bool inConsumers_ = false;
    bool isSplit(const Expr& c) const {
        const auto* b = c.as<Binary>();
        if (!b || b->op != BinaryOp::Ge || !b->b.as<IntImm>() || b->b.as<IntImm>()->value != ctx_.threads) return false;
        const auto* v = b->a.as<Var>();
        return v && v->role == VarRole::ThreadIndex;
    }
};

} // namespace

Stmt consumerBarriers(const Stmt& body, LowerContext& ctx) {
    if (ctx.consumerBarrier == 0 || ctx.producerThreads == 0) return body;
    ConsumerBarriers rewrite(ctx);
    return rewrite.mutate(body);
}

// The blocks of this kernel one SM holds at once, from the profile: threads (a warp-specialised
// block takes a whole SM's registers: __launch_bounds__(T + 128, 1)) and the planned shared
// memory. Registers are not known before ptxas: where they bind, the extra blocks wait for a
// second round, as any grid larger than the device.
namespace {

// After a loop over tiles whose epilogue stores by TMA with the wait deferred (ops/copy/
// Epilogue.cpp): thread 0 waits for the last tile's stores to have read the staging tile before
// the block may exit.
class FinalStoreWait : public IRMutator {
public:
    explicit FinalStoreWait(const LowerContext& ctx) : ctx_(ctx) {}

protected:
    Stmt mutateFor(const For* n, const Stmt& self) override {
        if (n->var != ctx_.persistentTile || !storesByTma(n->body)) return IRMutator::mutateFor(n, self);
        Stmt wait = ifThenElse(binary(BinaryOp::Eq, ctx_.tx(), intImm(0)),
                               evaluate(call("tma_store_wait_read", DType::I32, {intImm(0)})), {}, n->loc);
        return seq({self, comment("persistent: the last tile's TMA stores have read their staging tile", n->loc), wait},
                   n->loc);
    }

private:
    const LowerContext& ctx_;
    static bool storesByTma(const Stmt& s) {
        struct Find : IRVisitor {
            bool found = false;
            void visitCall(const Call* c) override {
                found |= c->name == "tma_store_commit";
                IRVisitor::visitCall(c);
            }
        } f;
        f.visit(s);
        return f.found;
    }
};

} // namespace

void persistentGrid(Kernel& k, const LowerContext& ctx) {
    if (!k.persistent || !ctx.persistentTile) return;
    k.body = FinalStoreWait(ctx).mutate(k.body);
    const Target& t = ctx.target;
    const int64_t threads = std::max<int64_t>(1, k.threads + ctx.producerThreads);
    int64_t perSM = std::min<int64_t>(t.maxBlocksPerSM, t.maxThreadsPerSM / threads);
    if (k.sharedBytes > 0) perSM = std::min<int64_t>(perSM, t.sharedMemPerSM / k.sharedBytes);
    if (ctx.producerThreads > 0) perSM = 1;
    perSM = std::max<int64_t>(perSM, 1);
    const auto* c = k.gridExtents[0].as<Call>();
    if (!c || c->name != "persistent_ctas") return;
    k.gridExtents = {call("persistent_ctas", DType::I32, {c->args[0], intImm(perSM)})};
}

} // namespace tlc

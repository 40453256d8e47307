// A warp-specialised loop inside a persistent kernel's loop over tiles (docs/lowering.md,
// "Persistent kernels"): the barriers are initialised once, before the split, and the loop's
// versions and mbarrier phases run on from tile to tile: iteration k of the block's i-th tile
// is iteration i * n + k of one long pipeline (plan.carry = i * n), so the producer warpgroup
// fills the next tile's first stages as soon as the consumers release them, while the
// consumers still run the last tile's epilogue. That needs the same n for every tile.
#include "passes/pipeline/LoopPlan.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"

#include <fmt/format.h>

namespace tlc::pipeline {

using namespace ir;

Expr carried(const LoopPlan& plan, const Expr& iter) { return plan.carry ? simplify(plan.carry + iter) : iter; }

std::string carryIssue(const LoopPlan& plan, const PipelinedKernel& kernel) {
    auto top = kernel.topLevel.find(plan.loop);
    if (top == kernel.topLevel.end() || !top->second.tileLoop) return "";
    // The values that change from tile to tile: the tile's counter and the lets inside the loop
    // over tiles that read it (the block indices, what is computed from them).
    std::set<const Var*> varying{top->second.tileLoop->var.get()};
    for (const auto& let : top->second.lets) {
        if (!let.inTile) continue;
        VarsRead r;
        r.visit(let.value);
        for (const Var* v : r.vars)
            if (varying.count(v)) {
                varying.insert(let.var.get());
                break;
            }
    }
    VarsRead n;
    n.visit(plan.loop->extent);
    for (const Var* v : n.vars)
        if (varying.count(v))
            return fmt::format("its trip count ({}) differs from tile to tile, so its mbarrier phases cannot run on "
                               "across the persistent loop over tiles",
                               printExpr(plan.loop->extent));
    return "";
}

void planCarry(LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx) {
    auto top = kernel.topLevel.find(plan.loop);
    if (top == kernel.topLevel.end() || !top->second.tileLoop) return;
    const For* tiles = top->second.tileLoop;
    plan.carry = simplify(Expr(tiles->var) * plan.loop->extent);
    ctx.consumerBarrier = kConsumerBarrier;
    ctx.decide(fmt::format("persistent pipeline of the loop over {}", plan.loop->var->name),
               fmt::format("phases carried across tiles (iteration {} * n + {})", tiles->var->name, plan.loop->var->name),
               "lowering",
               fmt::format("the mbarriers are initialised once; the producer warpgroup loads the next tile's first "
                           "stages while the consumers run this tile's epilogue, whose block barriers become named "
                           "barrier {} of the {} consumer threads",
                           kConsumerBarrier, ctx.threads),
               plan.loop->loc);
}

Stmt producerOverTiles(const LoopPlan& plan, const TopLevelLoop& top, const Stmt& loop, const std::vector<OuterLet>& lets) {
    const For* tiles = top.tileLoop;
    Stmt out = loop;
    for (auto it = lets.rbegin(); it != lets.rend(); ++it)
        if (it->inTile) out = letStmt(it->var, it->value, out, it->loc);
    out = forLoop(tiles->var, tiles->min, tiles->extent, ForKind::Serial, out, plan.loop->loc, {}, tiles->step);
    for (auto it = lets.rbegin(); it != lets.rend(); ++it)
        if (!it->inTile) out = letStmt(it->var, it->value, out, it->loc);
    return out;
}

} // namespace tlc::pipeline

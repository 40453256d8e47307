// Targets without cp.async (docs/lowering.md, "Prefetching through registers"): each copy from
// global into a shared tile that the loop reads later becomes two, through a fragment of the
// tile's shape. Iteration k stores the tile it was given into shared memory, starts loading
// iteration k + 1's into the fragment, then computes; the loads' latency hides behind the
// computation, and the tile keeps one version:
//
//     if (n > 0) copy(G(0), T_next)
//     for k: copy(T_next, T); barrier; if (k + 1 < n) copy(G(k + 1), T_next); <the rest>
//
// insert-barriers adds the one before the store to T (the previous iteration's reads).
#include "passes/pipeline/LoopPlan.h"

#include "ir/Simplify.h"
#include "ops/OpUtil.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc::pipeline {

using namespace ir;

// The loop prefetching through registers; nothing (and `why` says why) when no copy qualifies or
// the fragments would take too many registers.
Stmt prefetchThroughRegisters(const LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx,
                              std::string& why) {
    const For* n = plan.loop;
    if (!countsFromZero(n)) return {};
    const std::vector<Item>& items = plan.items;
    // Copies only: another fill (an im2col gather) stays where it is, in order, at its step.
    std::vector<size_t> producers;
    for (size_t i : readProducers(plan, kernel.accesses))
        if (copyOf(items[i])) producers.push_back(i);
    int64_t bytes = 0;
    std::string tiles;
    for (size_t i : producers) {
        const Region& tile = copyOf(items[i])->dst();
        // Elements loaded one at a time take a 32-bit register each until they are stored.
        bytes += ctx.generalShapes ? tile.elements() * 4 : tileBytes(tile);
        tiles += (tiles.empty() ? "" : ", ") + tile.buffer->name;
    }
    if (producers.empty()) {
        why = "no copy from global into a shared tile that the loop reads later can be a producer";
        return {};
    }
    // At most 64 registers a thread for the next iteration's tiles; 32 in a general variant,
    // whose element loads (with their addresses) beside sm80's mma operands spill past that.
    const int64_t perThread = (bytes + ctx.threads - 1) / std::max<int64_t>(ctx.threads, 1),
                  limit = ctx.generalShapes ? 128 : 256;
    if (perThread > limit) {
        why = fmt::format("{} would take {} bytes of registers a thread (more than {})", tiles, perThread, limit);
        return {};
    }
    const VarPtr& k = n->var;
    SourceLoc loc = n->loc;
    std::vector<Stmt> first, top, prefetch, rest;
    std::vector<Buffer> fragments;
    for (size_t i = 0; i < items.size(); ++i) {
        if (std::find(producers.begin(), producers.end(), i) == producers.end()) {
            rest.push_back(items[i].stmt);
            continue;
        }
        const ops::CopyOp& copy = *copyOf(items[i]);
        const Buffer& tile = copy.dst().buffer;
        Buffer next = makeBuffer(tile->name + "_next", tile->dtype, MemScope::Fragment, tile->shape);
        fragments.push_back(next);
        // Placed as the copy would split the tile (16-byte vectors where the rows allow):
        // the same global loads as without the prefetch, and stores of whole vectors.
        std::vector<int64_t> shape;
        if (constantShape(next, shape) && shape.size() == 2) {
            int64_t vec = ops::widestVector(shape[1], dtypeBytes(tile->dtype));
            if (auto f = layout::rowMajorCopyFragment(shape, ctx.threads, vec)) ctx.layouts.emplace(next.get(), *f);
        }
        const SourceLoc at = items[i].stmt->loc;
        Stmt load = tileOp(std::make_shared<ops::CopyOp>(copy.src(), wholeBuffer(next)), at);
        first.push_back(simplify(substitute(load, {{k, n->min}})));
        // A general variant loads the registers an element at a time: they are stored the same way.
        auto publish = std::make_shared<ops::CopyOp>(wholeBuffer(next), copy.dst());
        top.push_back(tileOp(ctx.generalShapes ? publish->withElementMoves() : publish, at));
        prefetch.push_back(substitute(load, {{k, Expr(k) + 1}}));
    }
    // The loads go out after the barrier that publishes the tiles: a barrier may wait for
    // every load in flight, and these should overlap the computation instead.
    top.push_back(barrier(loc));
    top.push_back(ifThenElse(binary(BinaryOp::Lt, Expr(k) + 1, n->extent), seq(prefetch, loc), {}, loc));
    top.insert(top.end(), rest.begin(), rest.end());
    // The first tiles only for a loop that runs (the copies read nothing past the tensors,
    // but an empty loop should not read at all).
    Stmt out = seq({simplify(ifThenElse(binary(BinaryOp::Lt, intImm(0), n->extent), seq(first, loc), {}, loc)),
                    forLoop(k, n->min, n->extent, ForKind::Serial, seq(top, loc), loc)},
                   loc);
    const FlatBody& flat = plan.flat;
    for (auto it = flat.allocs.rbegin(); it != flat.allocs.rend(); ++it) out = allocate((*it)->buffer, out, (*it)->loc);
    for (auto it = fragments.rbegin(); it != fragments.rend(); ++it) out = allocate(*it, out, loc);
    ctx.decide(loopSubject(n), "prefetch through registers", "lowering",
               fmt::format("{}: each iteration starts loading the next one's {} into registers ({} bytes a "
                           "thread) before it computes and stores them to shared memory at the top of the next; "
                           "one version of each tile",
                           ctx.generalShapes ? "the general variant's element loads cannot use cp.async"
                                             : "target '" + ctx.target.name + "' has no cp_async",
                           tiles, perThread),
               loc);
    return out;
}

} // namespace tlc::pipeline

// Thread-block clusters (docs/lowering.md, "Clusters"): grid's `cluster = N` groups N blocks
// along one grid dimension into a cluster that runs at once on neighbouring SMs. Where a
// warp-specialised loop's TMA tile does not depend on that dimension's block index, the N
// blocks load the same tile every iteration: each loads 1/N of its rows and multicasts them
// into all N blocks' shared memory, so the tile crosses from L2 once per cluster instead of
// once per block. The mbarrier protocol then spans the cluster: a block's producer writes
// into every block's version, so each consumer thread releases a version on every block's
// `empty` (Tma.cpp), and cluster barriers open and close the kernel (WarpSpecialize.cpp).
#include "passes/pipeline/LoopPlan.h"

#include <fmt/format.h>

namespace tlc::pipeline {

using namespace ir;

namespace {

bool reads(const Expr& e, const std::set<const Var*>& vars) {
    VarsRead r;
    r.visit(e);
    for (const Var* v : r.vars)
        if (vars.count(v)) return true;
    return false;
}

const char* dimName(int d) { return d == 0 ? "x" : d == 1 ? "y" : "z"; }

struct Choice {
    int dim = -1;
    std::set<size_t> shared;  // the TMA items the cluster's blocks share
    std::string why;          // no dimension: why not
};

// The first grid dimension along which some of the loop's TMA tiles stay the same (their
// positions do not read its block index, through the lets before the loop) and every such tile
// splits into `blocks` shares.
Choice chooseDimension(const LoopPlan& plan, const PipelinedKernel& kernel, const LowerContext& ctx, int64_t blocks) {
    Choice c;
    auto top = kernel.topLevel.find(plan.loop);
    if (top == kernel.topLevel.end()) {
        c.why = "the loop is not at the kernel's top level";
        return c;
    }
    std::vector<std::string> tried;
    for (size_t d = 0; d < ctx.gridExtents.size() && d < ctx.blockVars.size(); ++d) {
        std::set<const Var*> depends{ctx.blockVars[d].get()};
        for (const OuterLet& l : top->second.lets)
            if (reads(l.value, depends)) depends.insert(l.var.get());
        std::set<size_t> shared;
        std::string issue;
        for (size_t i = 0; i < plan.items.size(); ++i) {
            if (!plan.items[i].tma) continue;
            const ops::CopyOp& copy = *copyOf(plan.items[i]);  // TMA items are copies
            bool varies = false;
            for (const Expr& s : copy.src().starts) varies |= reads(s, depends);
            if (varies) continue;
            if (std::string why = ops::tmaMulticastIssue(copy, blocks); !why.empty() && issue.empty())
                issue = fmt::format("{}: {}", copy.dst().buffer->name, why);
            shared.insert(i);
        }
        if (shared.empty()) {
            tried.push_back(fmt::format("every TMA tile of the loop depends on the block index along {}", dimName(int(d))));
            continue;
        }
        if (!issue.empty()) {
            tried.push_back(fmt::format("along {}, {}", dimName(int(d)), issue));
            continue;
        }
        c.dim = int(d);
        c.shared = std::move(shared);
        return c;
    }
    c.why = tried.empty() ? "the grid names no block index" : fmt::format("{}", fmt::join(tried, "; "));
    return c;
}

} // namespace

void planCluster(LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx) {
    const int64_t asked = ctx.clusterAsked;
    if (asked <= 1 || !ctx.target.has(Feature::Clusters) || !plan.warpSpecialize || ctx.clusterSize > 1) return;
    std::string why;
    Choice c;
    if (asked > ctx.target.maxClusterSize)
        why = fmt::format("target '{}' runs clusters of at most {} blocks", ctx.target.name, ctx.target.maxClusterSize);
    else if (ctx.persistentTile)
        why = "a persistent grid's blocks each take tiles of their own, so the blocks of a cluster would not share "
              "an operand's tile (not built yet: drop `persistent` or `cluster`)";
    else if (ctx.splitK > 1)
        why = "a split-K grid's blocks count their arrival per tile, which the padding blocks of a cluster would "
              "not (not built yet: drop `split_k` or `cluster`)";
    else if (c = chooseDimension(plan, kernel, ctx, asked); c.dim < 0)
        why = c.why;
    if (!why.empty()) {
        ctx.clusterWhy = why;
        return;
    }
    plan.tma.cluster = asked;
    plan.tma.clusterDim = c.dim;
    plan.tma.multicast = c.shared;
    ctx.clusterSize = asked;
    ctx.clusterDim = c.dim;
    std::vector<std::string> tiles;
    for (size_t i : c.shared) tiles.push_back(producerTile(plan.items[i]).buffer->name);
    ctx.decide("cluster", fmt::format("{} blocks along {}", asked, dimName(c.dim)), "grid (cluster)",
               fmt::format("the blocks of a cluster share {} (its position does not depend on the block index "
                           "along {}): each loads 1/{} of its rows and multicasts them to all; every consumer "
                           "releases a version on each block's empty barrier; the launch pads the grid along {} to "
                           "whole clusters, the extra blocks only take part in the protocol",
                           fmt::join(tiles, ", "), dimName(c.dim), asked, dimName(c.dim)),
               plan.loop->loc);
}

// After lowering: a `cluster` the kernel does not use, said in --explain (and warned on a
// target with clusters, where the author's request went unmet).
void noteClusterUnused(LowerContext& ctx, SourceLoc loc) {
    if (ctx.clusterAsked <= 1 || ctx.clusterSize > 1 || ctx.generalShapes) return;
    std::string why;
    if (!ctx.target.has(Feature::Clusters)) {
        why = fmt::format("target '{}' has no thread-block clusters: the grid runs as cluster = 1", ctx.target.name);
    } else {
        why = ctx.clusterWhy.empty() ? "the kernel has no warp-specialised pipelined loop of TMA loads whose tiles "
                                       "the blocks of a cluster could share"
                                     : ctx.clusterWhy;
        ctx.diags.report(DiagId::warn_cluster_unused, SourceRange(loc), ctx.clusterAsked, why);
    }
    ctx.decide("cluster", "1", "grid (cluster)", why, loc);
}

} // namespace tlc::pipeline

// Tile inference of the block size when the author leaves `threads` out of `grid(...)`: the
// gemms ask for what their accumulators need (ops/gemm/GemmInfer), otherwise the largest tile
// sets it. Runs on the Tile IR before lowering, which needs the thread count from the start.
#include "passes/Passes.h"

#include "ir/Visitor.h"
#include "ops/gemm/GemmInfer.h"

#include <fmt/format.h>

#include <algorithm>

namespace tlc {

using namespace ir;

namespace {

class TileCollector : public IRVisitor {
public:
    std::vector<std::pair<const ops::GemmOp*, SourceLoc>> gemms;
    int64_t largest = 0;  // elements of the largest fragment or shared tile
    std::string largestName;

protected:
    void visitAllocate(const Allocate* n) override {
        std::vector<int64_t> shape;
        if ((n->buffer->scope == MemScope::Fragment || n->buffer->scope == MemScope::Shared) &&
            constantShape(n->buffer, shape)) {
            int64_t e = 1;
            for (int64_t x : shape) e *= x;
            if (e > largest) {
                largest = e;
                largestName = n->buffer->name;
            }
        }
        IRVisitor::visitAllocate(n);
    }
    void visitTileOpStmt(const TileOpStmt* n) override {
        if (const auto* g = dynamic_cast<const ops::GemmOp*>(n->op.get())) gemms.emplace_back(g, n->loc);
    }
};

int64_t floorPow2(int64_t x) {
    int64_t p = 1;
    while (p * 2 <= x) p *= 2;
    return p;
}

} // namespace

void inferThreads(Kernel& kernel, const Target& target) {
    if (kernel.threads != 0) return;
    auto decide = [&](int64_t threads, std::string reason) {
        kernel.threads = int(threads);
        kernel.decisions.add({"threads", std::to_string(threads), "inferred", std::move(reason), kernel.loc});
    };
    if (target.backend == Backend::Cpu) {
        decide(1, "target '" + target.name + "' runs each block on one thread; the C++ compiler vectorises its loops");
        return;
    }
    TileCollector tiles;
    tiles.visit(kernel.body);
    ops::ThreadsChoice best;
    for (const auto& [gemm, loc] : tiles.gemms) {
        ops::ThreadsChoice c = ops::gemmThreads(*gemm, target);
        if (c.threads > best.threads) best = c;
    }
    if (best.threads > 0) {
        decide(best.threads, best.reason);
        return;
    }
    int64_t warp = std::max(target.warpSize, 1);
    int64_t most = std::max(warp, std::min<int64_t>(256, target.maxThreadsPerBlock) / warp * warp);
    if (tiles.largest > 0) {
        int64_t threads = std::clamp<int64_t>(floorPow2(std::max<int64_t>(tiles.largest / 8, 1)), warp, most);
        decide(threads, fmt::format("no gemm; the largest tile, '{}', has {} elements: at least 8 per thread, "
                                    "whole warps of {}, at most {} threads",
                                    tiles.largestName, tiles.largest, warp, most));
        return;
    }
    decide(std::min<int64_t>(128, most), fmt::format("no tile constrains it: the default, {} threads",
                                                     std::min<int64_t>(128, most)));
}

} // namespace tlc

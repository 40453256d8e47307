// B's packed tiles reused across blocks (cpu targets). The cpu gemm packs B's tile into panels
// on every call (tl_cpu_gemm*.h, cpu_gemm), and a block packs every k-step's tile: the blocks of one
// column of C pack the same tiles again, each from memory, which cost a fifth of a bf16 gemm's
// time (bench/RESULTS.md). Where a gemm reads its B tile in place from a tensor (forward-copies
// made it so) that the kernel never writes, and the tile does not move with one of the block
// indices, that index becomes the launcher's innermost loop: a thread's consecutive blocks read
// the same B tiles, and the gemm keeps them packed for the launch (tl::gemm_tile_reused_b,
// whose cache knows tiles by address and is emptied by each launch). Which tiles are reused
// changes no value: a tile found in the cache is the packing of the same unchanged memory.
#include "passes/BufferUses.h"
#include "passes/Passes.h"

#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "ops/gemm/Gemm.h"

#include <fmt/format.h>

#include <set>

namespace tlc {

using namespace ir;

namespace {

const ops::GemmOp* asGemm(const TileOpStmt* s) { return dynamic_cast<const ops::GemmOp*>(s->op.get()); }

// The gemms whose B tile is a read-only tensor's, in the micro-kernel's types.
class Candidates : public IRVisitor {
public:
    explicit Candidates(std::set<const BufferNode*> written) : written_(std::move(written)) {}
    std::vector<const ops::GemmOp*> gemms;
    std::vector<SourceLoc> locs;

protected:
    void visitTileOpStmt(const TileOpStmt* n) override {
        if (const ops::GemmOp* g = asGemm(n)) {
            const Buffer& b = g->b().buffer;
            if (b->scope == MemScope::Global && !written_.count(b.get()) &&
                ops::cpuMicroKernelTypes(g->a().buffer->dtype, b->dtype, g->c().buffer->dtype))
                gemms.push_back(g), locs.push_back(n->loc);
        }
        IRVisitor::visitTileOpStmt(n);
    }

private:
    std::set<const BufferNode*> written_;
};

class MarkReuse : public IRMutator {
public:
    explicit MarkReuse(const std::vector<const ops::GemmOp*>& gemms) : gemms_(gemms.begin(), gemms.end()) {}

protected:
    Stmt mutateTileOpStmt(const TileOpStmt* n, const Stmt& self) override {
        const ops::GemmOp* g = asGemm(n);
        if (!g || !gemms_.count(g)) return self;
        return tileOp(g->withReusedB(), n->loc);
    }

private:
    std::set<const ops::GemmOp*> gemms_;
};

} // namespace

Stmt reusePackedB(Kernel& kernel, const Stmt& body, LowerContext& ctx) {
    // Stores and tile ops are the only writes: call_extern takes scalars, not pointers.
    Candidates found(writtenTensors(body));
    found.visit(body);
    if (found.gemms.empty()) return body;
    // The innermost grid index: x unless B's tiles move with it, else the first one they do
    // not move with. (An index they reach through a `let` counts as not moving them: then the
    // blocks only find fewer tiles packed.)
    auto movesB = [&](size_t dim) {
        if (dim >= kernel.blockVars.size()) return false;
        for (const ops::GemmOp* g : found.gemms)
            for (const Expr& start : g->b().starts)
                if (uses(start, kernel.blockVars[dim].get())) return true;
        return false;
    };
    std::optional<size_t> inner;
    for (size_t d = 0; d < kernel.gridExtents.size() && !inner; ++d)
        if (!movesB(d)) inner = d;
    if (!inner) return body;
    kernel.cpuInnerBlockDim = int(*inner);
    kernel.cpuReusesPackedTiles = true;
    const char* names[] = {"x", "y", "z"};
    for (size_t i = 0; i < found.gemms.size(); ++i) {
        const ops::GemmOp* g = found.gemms[i];
        ctx.decide(fmt::format("gemm({}, {}, {})", g->a().buffer->name, g->b().buffer->name, g->c().buffer->name),
                   "B's packed tiles reused across blocks", "reuse-packed-b",
                   fmt::format("{} is only read and its tiles do not move with the grid's {}: the launcher runs {} "
                               "innermost and each thread packs a tile of {} once per launch",
                               g->b().buffer->name, names[*inner], names[*inner], g->b().buffer->name),
                   found.locs[i]);
    }
    return MarkReuse(found.gemms).mutate(body);
}

} // namespace tlc

// A tile computed only to be stored (cpu targets). `for (i, j) in parallel(..) { x[i, j] =
// x[i, j] * r[i] * W[j] }` followed by `copy(x, Y[..])` writes the whole tile for the copy to
// read it back: on the cpu, where the tile is plain memory (rmsnorm's 64 KB is not even in L1),
// that is a pass over it for nothing, and the stores of the copy come in one burst after the
// arithmetic instead of beside it. When the loop fills the copy's whole source element by
// element (passes/ElementLoops.h), the copy takes the loop as its producer: each cache line of
// a row is computed and stored at once (ops/copy/Copy.cpp). The loop's values also go into the
// tile when anything may read it later: a use after the copy in the statements that follow
// (before a copy that replaces the whole tile), or a loop around both that the tile was
// allocated outside of.
#include "passes/BufferUses.h"
#include "passes/ElementLoops.h"
#include "passes/Passes.h"
#include "passes/SeqRewriter.h"

#include "ir/TileOp.h"
#include "ops/OpUtil.h"
#include "ops/copy/Copy.h"

#include <fmt/format.h>

namespace tlc {

using namespace ir;

namespace {

class FuseStores : public SeqRewriter {
public:
    FuseStores(std::set<const BufferNode*> written, LowerContext& ctx) : written_(std::move(written)), ctx_(ctx) {}

protected:
    Stmt mutateAllocate(const Allocate* n, const Stmt& self) override {
        scopes_[n->buffer.get()] = Scope{loops_, n->body};
        return SeqRewriter::mutateAllocate(n, self);
    }
    Stmt mutateFor(const For* n, const Stmt& self) override {
        ++loops_;
        Stmt out = SeqRewriter::mutateFor(n, self);
        --loops_;
        return out;
    }
    Stmt mutateWhile(const While* n, const Stmt& self) override {
        ++loops_;
        Stmt out = SeqRewriter::mutateWhile(n, self);
        --loops_;
        return out;
    }
    void rewriteSequence(const std::vector<Stmt>& stmts, std::set<size_t>& removed,
                         std::map<size_t, Stmt>& replaced) override {
        for (size_t i = 0; i + 1 < stmts.size(); ++i) {
            if (removed.count(i) || replaced.count(i)) continue;
            if (std::optional<Stmt> fused = fuse(stmts, i)) {
                replaced[i] = *fused;
                removed.insert(i + 1);
                ++i;
            }
        }
    }

private:
    struct Scope {
        int loops;  // loops around the allocation
        Stmt body;  // the allocation's
    };
    std::set<const BufferNode*> written_;
    LowerContext& ctx_;
    std::map<const BufferNode*, Scope> scopes_;
    int loops_ = 0;

    // Whether nothing reads `tile` after statement `last` of `stmts`: the next statement that
    // names it copies a whole new tile into it, or none does and every use of the tile in its
    // allocation is among the statements up to `last`, with no loop inside the allocation to
    // run them again.
    bool deadAfter(const BufferNode* tile, const std::vector<Stmt>& stmts, size_t last) const {
        for (size_t k = last + 1; k < stmts.size(); ++k) {
            if (!countBufferUses(stmts[k]).count(tile)) continue;
            const ops::CopyOp* copy = ops::plainCopy(stmts[k]);
            return copy && !copy->producer() && copy->dst().buffer.get() == tile && copy->dst().coversWholeBuffer() &&
                   copy->src().buffer.get() != tile;
        }
        auto scope = scopes_.find(tile);
        if (scope == scopes_.end() || scope->second.loops != loops_) return false;
        int uses = 0;
        for (size_t k = 0; k <= last; ++k) {
            auto counts = countBufferUses(stmts[k]);
            if (auto c = counts.find(tile); c != counts.end()) uses += c->second;
        }
        return uses == countBufferUses(scope->second.body)[tile];
    }

    std::optional<Stmt> fuse(const std::vector<Stmt>& stmts, size_t i) const {
        const ops::CopyOp* copy = ops::plainCopy(stmts[i + 1]);
        if (!copy || copy->producer()) return std::nullopt;
        std::optional<ElementLoop> element = elementLoop(stmts[i], written_, ctx_.bounds());
        if (!element) return std::nullopt;
        const auto& [nest, tile, value] = *element;
        const Region& src = copy->src();
        const Region& dst = copy->dst();
        // The form the cpu's lowering takes: whole cache lines of contiguous rows.
        if (src.buffer != tile || !src.coversWholeBuffer() || src.extents != nest.extents ||
            dst.buffer->scope != MemScope::Global || !ops::storesWholeLines(src, dst))
            return std::nullopt;
        const bool stores = !deadAfter(tile.get(), stmts, i + 1);
        ctx_.decide(tile->name, stores ? "computed as the copy stores it (and stored)" : "computed as the copy stores it",
                    "fuse-tile-stores",
                    fmt::format("the parallel loop fills {} for the copy into {}: on the cpu the copy computes each "
                                "cache line of a row and stores it at once, without a pass over the tile{}",
                                tile->name, dst.buffer->name,
                                stores ? "; the values go into the tile too, which is read again later" : ""),
                    stmts[i]->loc);
        return tileOp(copy->withProducer(element->producer(stores)), stmts[i + 1]->loc);
    }
};

} // namespace

Stmt fuseTileStores(const Stmt& body, LowerContext& ctx) {
    return FuseStores(writtenTensors(body), ctx).mutate(body);
}

} // namespace tlc

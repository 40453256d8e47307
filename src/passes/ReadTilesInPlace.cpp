// A tile read where it lies (cpu targets). After fuse-tile-loads, rmsnorm's block is
//   if (tile inside X) reduce_sum(sq[i, j] = x[i, j] * x[i, j], s, dim = 1) (filling x from X[r])
//   else { copy(X[r], x); reduce_sum(..) }
//   copy(x[i, j] = x[i, j] * rsqrt(s[i] / N + eps) * W[j], Y[r])
// and x is only read after the fill. On the cpu x is 64 KB of memory that the first pass writes
// and the others read back, while X's rows are still in L2: storing x costs more than reading X
// twice (rmsnorm 0.69 -> 0.78 of memcpy, layernorm 0.56 -> 0.68, bench/RESULTS.md). Where every
// statement after the fill reads x only element by element (parallel loops, producers), none
// writes it but a fused store that does not keep it, and the kernel never writes X, the
// statements join the interior branch reading X[r + (i, j)] where they read x[i, j], and the
// fill no longer stores x; the edge branch keeps the copy and the statements as written.
#include "passes/BufferUses.h"
#include "passes/Passes.h"
#include "passes/SeqRewriter.h"

#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "ops/OpUtil.h"
#include "ops/copy/Copy.h"
#include "ops/reduce/Reduce.h"

#include <fmt/format.h>

namespace tlc {

using namespace ir;

namespace {

const ops::ReduceOp* fillingReduce(const Stmt& s) {
    const TileOpStmt* t = s.as<TileOpStmt>();
    const auto* reduce = t ? dynamic_cast<const ops::ReduceOp*>(t->op.get()) : nullptr;
    return reduce && reduce->fill() && reduce->fill()->storesTile ? reduce : nullptr;
}

bool names(const Region& r, const BufferNode* b) { return r.buffer.get() == b; }

// How a statement after the fill uses the tile: not at all, by element reads only (in loops and
// producers), or otherwise (a region of an op, a store): then nothing moves.
class TileUses : public IRVisitor {
public:
    explicit TileUses(const BufferNode* tile) : tile_(tile) {}
    bool other = false;
    bool reads = false;
    bool lastUse = false;  // a fused store that computes the tile without keeping it: nothing may follow

protected:
    void visitLoad(const Load* n) override {
        if (n->buffer.get() == tile_) reads = true;
        IRVisitor::visitLoad(n);
    }
    void visitStore(const Store* n) override {
        if (n->buffer.get() == tile_) other = true;
        IRVisitor::visitStore(n);
    }
    void visitAllocate(const Allocate* n) override {
        if (n->buffer.get() == tile_) other = true;
        IRVisitor::visitAllocate(n);
    }
    void visitTileOpStmt(const TileOpStmt* n) override {
        const ops::CopyOp* copy = dynamic_cast<const ops::CopyOp*>(n->op.get());
        const ops::ReduceOp* reduce = dynamic_cast<const ops::ReduceOp*>(n->op.get());
        if (copy && copy->producer() && names(copy->src(), tile_) && !names(copy->dst(), tile_)) {
            // copy(x[i, j] = value, Y[..]): the tile computed as it is stored, and not kept.
            if (copy->producer()->stores) other = true;
            lastUse = true;
            reads = true;
            return;
        }
        if (reduce && reduce->producer() && !names(reduce->src(), tile_) && !names(reduce->dst(), tile_) &&
            !reduce->fill()) {
            // A reduction whose producer reads the tile: its element reads.
            for (const Region& r : reduce->producer()->reads) reads = reads || names(r, tile_);
            return;
        }
        for (const Region* r : n->op->reads()) other = other || names(*r, tile_);
        for (const Region* r : n->op->writes()) other = other || names(*r, tile_);
    }

private:
    const BufferNode* tile_;
};

class ReadInPlace : public SeqRewriter {
public:
    ReadInPlace(const Stmt& body, LowerContext& ctx) : written_(writtenTensors(body)), uses_(countBufferUses(body)), ctx_(ctx) {}

protected:
    void rewriteSequence(const std::vector<Stmt>& stmts, std::set<size_t>& removed,
                         std::map<size_t, Stmt>& replaced) override {
        for (size_t k = 0; k + 1 < stmts.size(); ++k) {
            const IfThenElse* branch = stmts[k].as<IfThenElse>();
            const ops::ReduceOp* reduce = branch ? fillingReduce(branch->thenCase) : nullptr;
            if (!reduce || !branch->elseCase) continue;
            const Region& from = reduce->fill()->from;
            const Buffer& tile = reduce->fill()->tile.buffer;
            // Where the tile cannot be read in place, the statements up to a fused store still
            // join both branches as they are (below).
            bool inPlace = !written_.count(from.buffer.get()) && from.buffer->dtype == tile->dtype;
            // A fill whose producer rewrites the tile is not the tile's last value.
            if (reduce->producer() && reduce->producer()->stores && names(reduce->src(), tile.get())) inPlace = false;
            // The statements after the fill that read the tile, up to its last use.
            size_t end = k + 1;
            bool ok = true, any = false;
            for (size_t i = k + 1; i < stmts.size() && ok; ++i) {
                TileUses uses(tile.get());
                uses.visit(stmts[i]);
                if (uses.other) ok = false;
                if (uses.reads) end = i + 1, any = true;
                if (uses.lastUse) break;
            }
            inPlace = inPlace && ok && any;
            // Nothing else names the tile: not before the fill (a loop around the sequence would
            // read the last iteration's values), not outside this sequence.
            int here = 0;
            for (size_t i = k; i < end && inPlace; ++i) {
                if (removed.count(i) || replaced.count(i)) inPlace = false;
                auto counts = countBufferUses(stmts[i]);
                here += counts.count(tile.get()) ? counts[tile.get()] : 0;
            }
            if (inPlace && here != (uses_.count(tile.get()) ? uses_.at(tile.get()) : 0)) inPlace = false;
            if (!inPlace) {
                unswitch(stmts, k, removed, replaced);
                continue;
            }
            // The reads of x[i, j] as reads of X at the same element.
            auto inTensor = [&](const Load* l) {
                std::vector<Expr> offsets;
                for (size_t d = 0; d < l->indices.size(); ++d)
                    if (!isConstInt(tile->shape[d], 1)) offsets.push_back(l->indices[d]);
                return load(from.buffer, ops::regionIndices(from, offsets));
            };
            auto rewrite = [&](const Expr& e) { return replaceLoads(e, tile.get(), inTensor); };
            std::vector<Stmt> inside = {tileOp(reduce->withFill({from, reduce->fill()->tile, false}), branch->thenCase->loc)};
            std::vector<Stmt> edge = {branch->elseCase};
            for (size_t i = k + 1; i < end; ++i) {
                inside.push_back(mapTileOps(replaceLoads(stmts[i], tile.get(), inTensor), rewrite));
                edge.push_back(stmts[i]);
                removed.insert(i);
            }
            ctx_.decide(tile->name, "read in place", "read-tiles-in-place",
                        fmt::format("on the cpu the statements after {}'s fill read {} where the tile lies inside it, "
                                    "instead of a copy that the first pass stores and the others read back; the copy "
                                    "remains for tiles at the tensor's edges",
                                    tile->name, regionString(from)),
                        stmts[k]->loc);
            replaced[k] = ifThenElse(branch->cond, seq(inside, stmts[k]->loc), seq(edge, stmts[k]->loc), stmts[k]->loc);
            k = end - 1;
        }
    }

private:
    // softmax's exp pass writes the tile, so nothing reads X in place; but the tile ops after the
    // fill's branch, up to a fused store into a tensor (whose lowering tests "tile inside" again),
    // join both branches as written: in the interior one the passes over the rows then stand
    // together, where interleave-rows can run them side by side (softmax 0.64 -> 0.7x of memcpy).
    void unswitch(const std::vector<Stmt>& stmts, size_t k, std::set<size_t>& removed, std::map<size_t, Stmt>& replaced) {
        const IfThenElse* branch = stmts[k].as<IfThenElse>();
        size_t end = k + 1;
        for (size_t i = k + 1; i < stmts.size(); ++i) {
            const TileOpStmt* t = stmts[i].as<TileOpStmt>();
            if (!t || removed.count(i) || replaced.count(i)) return;
            const auto* copy = dynamic_cast<const ops::CopyOp*>(t->op.get());
            if (copy && copy->producer() && copy->dst().buffer->scope == MemScope::Global) {
                end = i + 1;
                break;
            }
        }
        if (end == k + 1) return;
        std::vector<Stmt> inside = {branch->thenCase}, edge = {branch->elseCase};
        for (size_t i = k + 1; i < end; ++i) {
            inside.push_back(stmts[i]);
            edge.push_back(stmts[i]);
            removed.insert(i);
        }
        replaced[k] = ifThenElse(branch->cond, seq(inside, stmts[k]->loc), seq(edge, stmts[k]->loc), stmts[k]->loc);
    }

    // Every tile op of s with its expressions (producers' values) rewritten.
    static Stmt mapTileOps(const Stmt& s, const std::function<Expr(const Expr&)>& fn) {
        struct Mapper : IRMutator {
            const std::function<Expr(const Expr&)>& fn;
            explicit Mapper(const std::function<Expr(const Expr&)>& f) : fn(f) {}
            Stmt mutateTileOpStmt(const TileOpStmt* n, const Stmt&) override { return tileOp(n->op->mapExprs(fn), n->loc); }
        } mapper(fn);
        return mapper.mutate(s);
    }

    std::set<const BufferNode*> written_;
    std::map<const BufferNode*, int> uses_;
    LowerContext& ctx_;
};

} // namespace

Stmt readTilesInPlace(const Stmt& body, LowerContext& ctx) {
    return ReadInPlace(body, ctx).mutate(body);
}

} // namespace tlc

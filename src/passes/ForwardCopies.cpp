// Staging copies on the cpu. A kernel written for GPUs stages global tiles through shared
// memory (`copy(X[..], x_s); copy(x_s, x)`, `copy(A[..], A_s); gemm(A_s, ..)`) for coalescing,
// layouts and asynchronous copies; on the cpu shared memory is ordinary memory, so the stage is
// a second pass over the tile and nothing more. Where the stage S (shared or a fragment) is
// used by nothing else, is written whole and has G's element type (so that it changes no value):
//   copy(G[..], S); copy(S, F)   adjacent: become copy(G[..], F), and S is not allocated;
//   copy(G[..], S); .. gemm(S, ..)   with the micro-kernel's types and G's rows contiguous and
//       never written by the kernel: the gemm reads the tensor itself when the tile lies inside
//       it, and the copy into S (zeros past the end) remains for the tiles at its edges.
// Reads past G's end still give zero. A gemm's A tile that runs past its tensor's last row
// (the bottom row of blocks) has zero rows there, which add nothing to C's rows that C keeps
// when those rows only leave C through copies that drop them (rowsLeaveOnlyInside): the gemm
// then computes only C's rows that A has (`rows`), reading A in place when its other
// dimensions lie inside, instead of a guarded copy and products of zeros.
#include "passes/BufferUses.h"
#include "passes/Passes.h"
#include "passes/SeqRewriter.h"

#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ops/OpUtil.h"
#include "ops/copy/Copy.h"
#include "ops/gemm/Gemm.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <optional>
#include <set>

namespace tlc {

using namespace ir;

namespace {

using ops::plainCopy;

// Variables that may change within a block: loop variables and the `let`s inside loops.
std::set<const Var*> varyingInBlock(const Stmt& body) {
    class Collect : public IRVisitor {
    public:
        std::set<const Var*> vars;

    protected:
        void visitFor(const For* n) override {
            vars.insert(n->var.get());
            ++depth_;
            IRVisitor::visitFor(n);
            --depth_;
        }
        void visitWhile(const While* n) override {
            ++depth_;
            IRVisitor::visitWhile(n);
            --depth_;
        }
        void visitLetStmt(const LetStmt* n) override {
            if (depth_) vars.insert(n->var.get());
            IRVisitor::visitLetStmt(n);
        }

    private:
        int depth_ = 0;
    } collect;
    collect.visit(body);
    return collect.vars;
}

// e names one of `vars` or reads memory (a `var` of the source lives in a buffer).
bool usesAny(const Expr& e, const std::set<const Var*>& vars) {
    class Uses : public IRVisitor {
    public:
        const std::set<const Var*>* vars;
        bool found = false;

    protected:
        void visitVar(const Var* n) override { found = found || vars->count(n); }
        void visitLoad(const Load* n) override {
            found = true;
            IRVisitor::visitLoad(n);
        }
    } uses;
    uses.vars = &vars;
    uses.visit(e);
    return uses.found;
}

// For a `parallel` loop that mentions c: true when it is a row-local epilogue on it: `for (i, j) in
// parallel(..)` whose every load of c is c[i, j], which stores only c[i, j] (relu, a bias, a
// scale): each row of c stays computed from that row alone. Nothing for other loops and for
// loops that do not mention c.
std::optional<bool> rowLocalEpilogue(const For* outer, const BufferNode* c) {
    if (outer->forKind != ForKind::Parallel || !countBufferUses(outer->body).count(c)) return std::nullopt;
    const For* inner = outer->body.as<For>();
    if (!inner || inner->forKind != ForKind::Parallel) return false;
    class Local : public IRVisitor {
    public:
        const BufferNode* c;
        std::vector<VarPtr> at;
        bool ok = true;

    protected:
        void visitLoad(const Load* n) override {
            ok = ok && (n->buffer.get() != c || ops::indicesAre(n->indices, at));
            IRVisitor::visitLoad(n);
        }
        void visitStore(const Store* n) override {
            ok = ok && n->buffer.get() == c && ops::indicesAre(n->indices, at);
            IRVisitor::visitStore(n);
        }
        void visitTileOpStmt(const TileOpStmt* n) override {
            ok = false;
            IRVisitor::visitTileOpStmt(n);
        }
    } local;
    local.c = c;
    local.at = {outer->var, inner->var};
    local.visit(inner->body);
    return local.ok;
}

// C's rows from `valid` on (valid = extent - start, the rows of a tensor with `extent` rows
// that a tile starting at row `start` has) never leave C: C is read only by one gemm (as its
// accumulator), by row-local epilogues (rowLocalEpilogue) and by copies of all of C to a tensor
// region that starts at row `start` of a tensor `extent` rows long (the copy drops those rows),
// and `start` stays the same for the whole block (so a row past the end is never inside in
// another iteration).
bool rowsLeaveOnlyInside(const Stmt& body, const Buffer& c, const Expr& extent, const Expr& start) {
    if (usesAny(start, varyingInBlock(body))) return false;
    class Uses : public IRVisitor {
    public:
        const BufferNode* c;
        std::string extent, start;
        int64_t rows;
        int gemms = 0;
        bool ok = true;

    protected:
        void visitLoad(const Load* n) override {
            ok = ok && n->buffer.get() != c;
            IRVisitor::visitLoad(n);
        }
        void visitFor(const For* n) override {
            if (std::optional<bool> local = rowLocalEpilogue(n, c)) ok = ok && *local;
            else IRVisitor::visitFor(n);
        }
        void visitTileOpStmt(const TileOpStmt* n) override {
            bool reads = false;
            for (const Region* r : n->op->reads()) reads = reads || r->buffer.get() == c;
            if (reads) {
                if (const auto* g = dynamic_cast<const ops::GemmOp*>(n->op.get()))
                    ok = ok && g->c().buffer.get() == c && g->a().buffer.get() != c && g->b().buffer.get() != c, ++gemms;
                else if (const auto* copy = dynamic_cast<const ops::CopyOp*>(n->op.get()); copy && !copy->tmaBarrier())
                    ok = ok && dropsRows(*copy);
                else
                    ok = false;
            }
            IRVisitor::visitTileOpStmt(n);
        }

    private:
        bool dropsRows(const ops::CopyOp& copy) const {
            const Region& to = copy.dst();
            std::vector<size_t> dims = ops::tileDims(to);
            if (copy.src().buffer.get() != c || !copy.src().coversWholeBuffer() || to.buffer->scope != MemScope::Global ||
                dims.size() != 2 || to.extents[dims[0]] != rows)
                return false;
            return printExpr(simplify(to.starts[dims[0]])) == start && printExpr(to.buffer->shape[dims[0]]) == extent;
        }
    } uses;
    std::vector<int64_t> shape = wholeBuffer(c).squeezedExtents();
    if (shape.size() != 2 || c->shape.size() != 2) return false;
    uses.c = c.get();
    uses.extent = printExpr(extent);
    uses.start = printExpr(simplify(start));
    uses.rows = shape[0];
    uses.visit(body);
    return uses.ok && uses.gemms == 1;
}

class Forward : public SeqRewriter {
public:
    Forward(std::map<const BufferNode*, int> uses, std::set<const BufferNode*> written, const Stmt& body,
            LowerContext& ctx)
        : uses_(std::move(uses)), written_(std::move(written)), body_(body), ctx_(ctx) {}
    std::set<const BufferNode*> dropped;

protected:
    void rewriteSequence(const std::vector<Stmt>& stmts, std::set<size_t>& removed,
                         std::map<size_t, Stmt>& replaced) override {
        for (size_t g = 0; g < stmts.size(); ++g)
            if (std::optional<Stmt> two = gemmOnTensors(stmts, g, removed)) replaced[g] = *two;
        for (size_t c = 0; c < stmts.size(); ++c) readInPlace(stmts, c, removed, replaced);
    }
    std::optional<Stmt> rewritePair(const Stmt& first, const Stmt& second) override {
        const ops::CopyOp* in = plainCopy(first);
        const ops::CopyOp* on = plainCopy(second);
        if (!in || !on || !forwardable(*in, *on)) return std::nullopt;
        const Buffer& stage = in->dst().buffer;
        dropped.insert(stage.get());
        ctx_.decide(stage->name, "not allocated", "forward-copies",
                    fmt::format("on the cpu shared memory is ordinary memory: {} is copied into {} directly",
                                in->src().buffer->name, on->dst().buffer->name),
                    first->loc);
        return tileOp(std::make_shared<ops::CopyOp>(in->src(), on->dst()), first->loc);
    }
    Stmt mutateAllocate(const Allocate* n, const Stmt& self) override {
        Stmt body = mutate(n->body);
        if (dropped.count(n->buffer.get())) return body;
        return body.same(n->body) ? self : allocate(n->buffer, body, n->loc, n->init);
    }

private:
    std::map<const BufferNode*, int> uses_;
    std::set<const BufferNode*> written_;
    Stmt body_;
    LowerContext& ctx_;

    // The rows of C a gemm computes when A's tile `from` may run past its tensor's last row and
    // those rows never leave C; nothing otherwise.
    Expr edgeRows(const ops::GemmOp& gemm, const Region& from) const {
        std::vector<size_t> dims = ops::tileDims(from);
        if (gemm.transposeA() || dims.size() != 2 || gemm.c().buffer->scope != MemScope::Fragment ||
            !gemm.c().coversWholeBuffer())
            return {};
        const Expr& extent = from.buffer->shape[dims[0]];
        const Expr& start = from.starts[dims[0]];
        if (!rowsLeaveOnlyInside(body_, gemm.c().buffer, extent, start)) return {};
        return simplify(minExpr(intImm(from.extents[dims[0]]), extent - start), ctx_.bounds());
    }

    // stmts[g] as a gemm that reads the tensors its staged operands come from, where the tiles
    // lie inside them: `if (inside) gemm(A[..], ..) else { copy(A[..], A_s); gemm(A_s, ..) }`.
    // The copies it takes over are added to `taken`.
    std::optional<Stmt> gemmOnTensors(const std::vector<Stmt>& stmts, size_t g, std::set<size_t>& taken) {
        const TileOpStmt* t = stmts[g].as<TileOpStmt>();
        const auto* gemm = t ? dynamic_cast<const ops::GemmOp*>(t->op.get()) : nullptr;
        if (!gemm || !ops::cpuMicroKernelTypes(gemm->a().buffer->dtype, gemm->b().buffer->dtype, gemm->c().buffer->dtype))
            return std::nullopt;
        std::vector<size_t> staged;
        std::map<const BufferNode*, Region> sources;
        for (const Region* operand : {&gemm->a(), &gemm->b()}) {
            const Buffer& stage = operand->buffer;
            auto count = uses_.find(stage.get());
            if (!operand->coversWholeBuffer() || sources.count(stage.get()) || count == uses_.end() || count->second != 2)
                continue;
            for (size_t c = g; c-- > 0;) {
                const ops::CopyOp* copy = plainCopy(stmts[c]);
                if (!copy || copy->dst().buffer != stage) continue;
                const Region& from = copy->src();
                const int64_t* unit = from.buffer->scope == MemScope::Global ? asConstInt(from.buffer->strides.back()) : nullptr;
                if (unit && *unit == 1 && copy->dst().coversWholeBuffer() && stage->dtype == from.buffer->dtype &&
                    !written_.count(from.buffer.get()) && !taken.count(c)) {
                    staged.push_back(c);
                    sources[stage.get()] = from;
                }
                break;
            }
        }
        if (staged.empty()) return std::nullopt;
        // A's rows past its tensor's end: C's rows there need not be computed (edgeRows).
        Expr rows;
        if (auto it = sources.find(gemm->a().buffer.get()); it != sources.end()) rows = edgeRows(*gemm, it->second);
        // Every tile inside its tensor, each condition once (A and B share K's).
        std::vector<Expr> conditions;
        std::set<std::string> seen;
        std::function<void(const Expr&)> add = [&](const Expr& e) {
            if (const Binary* both = e.as<Binary>(); both && both->op == BinaryOp::And) {
                add(both->a);
                add(both->b);
            } else if (seen.insert(printExpr(e)).second) {
                conditions.push_back(e);
            }
        };
        for (size_t c : staged) {
            const ops::CopyOp* copy = plainCopy(stmts[c]);
            Region inside = copy->src();
            if (rows && copy->dst().buffer == gemm->a().buffer) {
                // In place up to the last row A has: every dimension inside but the rows, whose
                // first must be.
                size_t rowDim = ops::tileDims(inside)[0];
                inside.extents[rowDim] = 1;
            }
            add(simplify(ops::tileInside(inside), ctx_.bounds()));
        }
        Expr inside = boolImm(true);
        for (const Expr& e : conditions) inside = logicalAnd(inside, e);
        inside = simplify(inside, ctx_.bounds());
        if (const int64_t* known = asConstInt(inside); known && !*known) return std::nullopt;
        std::shared_ptr<const ops::GemmOp> computed = std::static_pointer_cast<const ops::GemmOp>(
            rows ? TileOpPtr(gemm->withRows(rows)) : t->op);
        auto direct = computed->mapRegions([&](const Region& r) {
            auto it = sources.find(r.buffer.get());
            return it == sources.end() ? r : it->second;
        });
        std::vector<Stmt> staging;
        for (size_t c : staged) {
            taken.insert(c);
            staging.push_back(stmts[c]);
        }
        staging.push_back(tileOp(computed, stmts[g]->loc));
        if (rows)
            ctx_.decide(gemm->c().buffer->name, fmt::format("rows = {}", printExpr(rows)), "forward-copies",
                        fmt::format("on the cpu a tile past {}'s last row computes only the rows {} has: the others "
                                    "are zeros in {} and only leave {} through copies that drop them",
                                    sources.at(gemm->a().buffer.get()).buffer->name,
                                    sources.at(gemm->a().buffer.get()).buffer->name, gemm->a().buffer->name,
                                    gemm->c().buffer->name),
                        stmts[g]->loc);
        for (size_t c : staged)  // in operand order (`sources` is ordered by address)
            ctx_.decide(plainCopy(stmts[c])->src().buffer->name, fmt::format("read in place by {}", gemm->str()),
                        "forward-copies",
                        "on the cpu the micro-kernel reads a tile that lies inside the tensor where it is; the staging "
                        "copy remains for tiles at the tensor's edges",
                        stmts[g]->loc);
        Stmt onTensors = tileOp(direct, stmts[g]->loc);
        if (const int64_t* known = asConstInt(inside); known && *known) {
            for (const auto& [stage, from] : sources) dropped.insert(stage);
            return onTensors;
        }
        return ifThenElse(inside, onTensors, seq(staging, stmts[g]->loc), stmts[g]->loc);
    }

    // stmts[c] = copy(G[fixed region], F) with F a fragment only read, element by element, by
    // the statements after it, the region constant and inside G, G never written: those reads
    // read G instead, and F is not allocated (rmsnorm's `copy(W[0], w)`, once per block).
    void readInPlace(const std::vector<Stmt>& stmts, size_t c, std::set<size_t>& removed,
                     std::map<size_t, Stmt>& replaced) {
        const ops::CopyOp* copy = plainCopy(stmts[c]);
        if (!copy || removed.count(c) || replaced.count(c)) return;
        const Region& from = copy->src();
        const Buffer& tile = copy->dst().buffer;
        const int64_t* unit = from.buffer->scope == MemScope::Global ? asConstInt(from.buffer->strides.back()) : nullptr;
        if (!unit || *unit != 1 || tile->scope != MemScope::Fragment || !copy->dst().coversWholeBuffer() ||
            tile->dtype != from.buffer->dtype || written_.count(from.buffer.get()) ||
            from.squeezedExtents() != wholeBuffer(tile).squeezedExtents())
            return;
        for (const Expr& start : from.starts)
            if (!asConstInt(start)) return;
        const Expr insideExpr = simplify(ops::tileInside(from), ctx_.bounds());
        const int64_t* inside = asConstInt(insideExpr);  // points into insideExpr
        if (!inside || !*inside) return;
        // Every other use of F is a load in the statements after the copy.
        class Loads : public IRVisitor {
        public:
            const BufferNode* tile;
            int count = 0;

        protected:
            void visitLoad(const Load* n) override {
                count += n->buffer.get() == tile;
                IRVisitor::visitLoad(n);
            }
        } loads;
        loads.tile = tile.get();
        for (size_t j = c + 1; j < stmts.size(); ++j) {
            if (removed.count(j) || replaced.count(j)) return;
            loads.visit(stmts[j]);
        }
        auto count = uses_.find(tile.get());
        if (count == uses_.end() || count->second != 1 + loads.count) return;
        class ReadTensor : public IRMutator {
        public:
            const BufferNode* tile;
            const Region* from;

        protected:
            Expr mutateLoad(const Load* n, const Expr& self) override {
                if (n->buffer.get() != tile || n->lanes != 1) return IRMutator::mutateLoad(n, self);
                std::vector<Expr> offsets;  // the fragment's indices over the region's tile dimensions
                std::vector<int64_t> shape;
                constantShape(n->buffer, shape);
                for (size_t d = 0; d < n->indices.size(); ++d)
                    if (shape[d] != 1) offsets.push_back(mutate(n->indices[d]));
                std::vector<Expr> at = ops::regionIndices(*from, offsets);
                for (Expr& e : at) e = simplify(e);
                return load(from->buffer, at);
            }
        } read;
        read.tile = tile.get();
        read.from = &from;
        removed.insert(c);
        for (size_t j = c + 1; j < stmts.size(); ++j)  // only those that read F (copy pairs stay pairs)
            if (Stmt s = read.mutate(stmts[j]); !s.same(stmts[j])) replaced[j] = mutate(s);
        dropped.insert(tile.get());
        ctx_.decide(tile->name, "not allocated", "forward-copies",
                    fmt::format("on the cpu the statements after the copy read {} where it is instead of a copy "
                                "made for every block (the tile lies inside it, and nothing writes either)",
                                regionString(from)),
                    stmts[c]->loc);
    }

    bool forwardable(const ops::CopyOp& in, const ops::CopyOp& on) const {
        const Buffer& stage = in.dst().buffer;
        auto count = uses_.find(stage.get());
        return in.src().buffer->scope == MemScope::Global &&
               (stage->scope == MemScope::Shared || stage->scope == MemScope::Fragment) &&
               on.src().buffer == stage && in.dst().coversWholeBuffer() && on.src().coversWholeBuffer() &&
               stage->dtype == in.src().buffer->dtype && count != uses_.end() && count->second == 2;
    }
};

} // namespace

Stmt forwardCopies(const Stmt& body, LowerContext& ctx) {
    Forward forward(countBufferUses(body), writtenTensors(body), body, ctx);
    return forward.mutate(body);
}

} // namespace tlc

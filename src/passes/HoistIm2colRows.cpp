// hoist-im2col-rows: an im2col in a loop that does not move its rows (nhw_step uses nothing the
// loop binds, and no memory) gathers the same output pixels at every step; only the filter tap
// and channels change. Their start in the image (n, h0, w0: divisions by OH * OW and OW, at
// run time) is computed once, before the loop, into a per-thread table (ops::Im2ColRowsOp) that
// the gather reads. nvcc does not hoist them itself: the divisions come after the step's
// barriers and asm, where they are not known to run, and it does not move a division that
// might not. GPU targets, 16-byte (or narrower) vectors of channels only: a general variant's
// element moves would need a table entry per element.
#include "passes/Passes.h"

#include "ir/Accesses.h"
#include "ir/Visitor.h"
#include "ops/im2col/Im2Col.h"

#include <set>

namespace tlc {

using namespace ir;

namespace {

// The variables an expression reads or (`bound`) a statement binds (lets, loops).
class Vars : public IRVisitor {
public:
    explicit Vars(bool bound) : bound_(bound) {}
    std::set<const Var*> vars;

protected:
    void visitVar(const Var* n) override {
        if (!bound_) vars.insert(n);
    }
    void visitLetStmt(const LetStmt* n) override {
        vars.insert(n->var.get());
        IRVisitor::visitLetStmt(n);
    }
    void visitFor(const For* n) override {
        vars.insert(n->var.get());
        IRVisitor::visitFor(n);
    }

private:
    bool bound_;
};

// The gathers of one loop's body (not of loops inside it) whose rows it does not change, each
// made to read a table; the tables' fills, for before the loop.
class UseTables : public IRMutator {
public:
    UseTables(LowerContext& ctx, std::set<const Var*> bound) : ctx_(ctx), bound_(std::move(bound)) {}
    std::vector<Stmt> fills;
    std::vector<Buffer> tables;

protected:
    Stmt mutateFor(const For*, const Stmt& self) override { return self; }  // their own (done first)
    Stmt mutateTileOpStmt(const TileOpStmt* n, const Stmt& self) override {
        const auto* op = dynamic_cast<const ops::Im2ColOp*>(n->op.get());
        if (!op || op->rows() || op->col().buffer->scope != MemScope::Shared) return self;
        Vars uses(false);
        uses.visit(op->nhwStep());
        for (const Var* v : uses.vars)
            if (bound_.count(v)) return self;
        if (!Footprint::of(op->nhwStep()).reads.empty()) return self;
        const std::vector<int64_t>& extents = op->col().extents;
        if (extents.size() != 2) return self;
        const int64_t BM = extents[0], BK = extents[1];
        const Buffer& img = op->img().buffer;
        const int64_t vec = ops::im2colImageVector(ctx_, img, op->col().buffer->dtype, BK);
        if (vec == 1) return self;
        Buffer table = makeBuffer(op->col().buffer->name + "_rows", DType::I32, MemScope::Local,
                                  {intImm(ops::im2colRowsEntries(ctx_, BM, BK, vec))});
        tables.push_back(table);
        fills.push_back(tileOp(std::make_shared<ops::Im2ColRowsOp>(img, table, op->nhwStep(), BM, BK, vec,
                                                                   op->params()),
                               n->loc));
        return tileOp(op->withRows(table, vec), n->loc);
    }

private:
    LowerContext& ctx_;
    std::set<const Var*> bound_;
};

class HoistRows : public IRMutator {
public:
    explicit HoistRows(LowerContext& ctx) : ctx_(ctx) {}

protected:
    Stmt mutateFor(const For* n, const Stmt& self) override {
        Stmt inner = IRMutator::mutateFor(n, self);
        const For* f = inner.as<For>();
        Vars bound(true);
        bound.vars.insert(f->var.get());
        bound.visit(f->body);
        UseTables use(ctx_, bound.vars);
        Stmt body = use.mutate(f->body);
        if (use.fills.empty()) return inner;
        use.fills.push_back(forLoop(f->var, f->min, f->extent, f->forKind, body, f->loc, f->pipeline, f->step));
        Stmt out = seq(use.fills, f->loc);
        for (auto it = use.tables.rbegin(); it != use.tables.rend(); ++it) out = allocate(*it, out, f->loc);
        return out;
    }

private:
    LowerContext& ctx_;
};

} // namespace

Stmt hoistIm2colRows(const Stmt& body, LowerContext& ctx) {
    if (ctx.target.backend == Backend::Cpu || ctx.generalShapes) return body;
    return HoistRows(ctx).mutate(body);
}

} // namespace tlc

// Tile ops become thread-level code (each op lowers itself, see src/ops/), parallel loops
// follow their domain layout, pipelined loops that pipeline-loops left alone (targets without
// cp.async) become plain loops, and fragments become per-thread arrays.
#include "passes/Passes.h"

#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "ops/parallel/Parallel.h"
#include "passes/SharedLiveness.h"

namespace tlc {

using namespace ir;

namespace {

class Lowerer : public IRMutator {
public:
    Lowerer(LowerContext& ctx, std::map<const StmtNode*, int64_t> headroom) : ctx_(ctx), headroom_(std::move(headroom)) {}

protected:
    Stmt mutateTileOpStmt(const TileOpStmt* n, const Stmt&) override {
        auto it = headroom_.find(n);
        ctx_.sharedHeadroom = it == headroom_.end() ? 0 : it->second;
        return n->op->lower(ctx_, n->loc);
    }

    Stmt mutateFor(const For* n, const Stmt& self) override {
        if (n->forKind == ForKind::Parallel) {
            auto nest = ops::parallelNest(n);
            if (!nest) {
                ctx_.diags.report(DiagId::err_not_lowerable, SourceRange(n->loc), "this parallel loop",
                                  "its extents must be compile-time constants");
                return self;
            }
            return ops::lowerParallel(ctx_, *nest);
        }
        At at(here_, n->loc);
        Stmt body = mutate(n->body);
        ForKind kind = n->forKind == ForKind::Pipelined ? ForKind::Serial : n->forKind;
        return forLoop(n->var, n->min, n->extent, kind, body, n->loc, {}, n->step);
    }

    Stmt mutateAllocate(const Allocate* n, const Stmt& self) override {
        Stmt body = mutate(n->body);
        if (n->buffer->scope == MemScope::Fragment) return allocate(ctx_.localBuffer(n->buffer), body, n->loc, n->init);
        return body.same(n->body) ? self : allocate(n->buffer, body, n->loc, n->init);
    }

    Stmt mutateStore(const Store* n, const Stmt& self) override {
        At at(here_, n->loc);
        if (n->buffer->scope == MemScope::Fragment) fragmentOutsideLoop(n->buffer, here_);
        return IRMutator::mutateStore(n, self);
    }

    Expr mutateLoad(const Load* n, const Expr& self) override {
        if (n->buffer->scope == MemScope::Fragment) fragmentOutsideLoop(n->buffer, here_);
        return IRMutator::mutateLoad(n, self);
    }

    // Expressions have no location: diagnostics about them point at their statement.
    Stmt mutateEvaluate(const Evaluate* n, const Stmt& self) override {
        At at(here_, n->loc);
        return IRMutator::mutateEvaluate(n, self);
    }
    Stmt mutateLetStmt(const LetStmt* n, const Stmt& self) override {
        At at(here_, n->loc);
        return IRMutator::mutateLetStmt(n, self);
    }
    Stmt mutateIfThenElse(const IfThenElse* n, const Stmt& self) override {
        At at(here_, n->loc);
        return IRMutator::mutateIfThenElse(n, self);
    }

private:
    LowerContext& ctx_;
    std::map<const StmtNode*, int64_t> headroom_;
    SourceLoc here_;  // the innermost statement with a location around what is being lowered

    // Sets here_ to a statement's location (when it has one) for its extent.
    struct At {
        SourceLoc& here;
        SourceLoc saved;
        At(SourceLoc& h, SourceLoc loc) : here(h), saved(h) {
            if (loc.valid()) here = loc;
        }
        ~At() { here = saved; }
    };

    // An element of a fragment lives in one thread; outside a parallel loop no thread is chosen.
    void fragmentOutsideLoop(const Buffer& b, SourceLoc loc) {
        ctx_.diags.report(DiagId::err_not_lowerable, SourceRange(loc), "an element access to fragment '" + b->name + "'",
                          "fragments are accessed element by element only inside parallel loops");
    }
};

} // namespace

Stmt lowerTileOps(const Stmt& body, LowerContext& ctx) { return Lowerer(ctx, sharedHeadroom(body, ctx)).mutate(body); }

} // namespace tlc

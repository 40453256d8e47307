#include "ir/Visitor.h"

#include "ir/TileOp.h"

namespace tlc::ir {

// ---- IRVisitor ------------------------------------------------------------------------------

void IRVisitor::visit(const Expr& e) {
    if (!e) return;
    switch (e->kind) {
#define EXPR_NODE(N) case NodeKind::N: visit##N(static_cast<const N*>(e.get())); break;
#include "ir/IRNodes.def"
    default: break;
    }
}

void IRVisitor::visit(const Stmt& s) {
    if (!s) return;
    switch (s->kind) {
#define STMT_NODE(N) case NodeKind::N: visit##N(static_cast<const N*>(s.get())); break;
#include "ir/IRNodes.def"
    default: break;
    }
}

void IRVisitor::visitIntImm(const IntImm*) {}
void IRVisitor::visitFloatImm(const FloatImm*) {}
void IRVisitor::visitVar(const Var*) {}
void IRVisitor::visitCast(const Cast* n) { visit(n->value); }
void IRVisitor::visitUnary(const Unary* n) { visit(n->operand); }
void IRVisitor::visitBinary(const Binary* n) { visit(n->a); visit(n->b); }
void IRVisitor::visitSelect(const Select* n) { visit(n->cond); visit(n->thenValue); visit(n->elseValue); }
void IRVisitor::visitCall(const Call* n) { for (const auto& a : n->args) visit(a); }
void IRVisitor::visitLoad(const Load* n) { for (const auto& i : n->indices) visit(i); }

void IRVisitor::visitSeq(const Seq* n) { for (const auto& s : n->stmts) visit(s); }
void IRVisitor::visitLetStmt(const LetStmt* n) { visit(n->value); visit(n->body); }
void IRVisitor::visitEvaluate(const Evaluate* n) { visit(n->value); }
void IRVisitor::visitStore(const Store* n) { for (const auto& i : n->indices) visit(i); visit(n->value); }
void IRVisitor::visitFor(const For* n) { visit(n->min); visit(n->extent); visit(n->step); visit(n->body); }
void IRVisitor::visitIfThenElse(const IfThenElse* n) { visit(n->cond); visit(n->thenCase); visit(n->elseCase); }
void IRVisitor::visitWhile(const While* n) { visit(n->cond); visit(n->body); }
void IRVisitor::visitAllocate(const Allocate* n) { visit(n->init); visit(n->body); }
void IRVisitor::visitBarrier(const Barrier*) {}
void IRVisitor::visitComment(const Comment*) {}
void IRVisitor::visitTileOpStmt(const TileOpStmt* n) {
    n->op->mapExprs([this](const Expr& e) { visit(e); return e; });
}

// ---- IRMutator ------------------------------------------------------------------------------

Expr IRMutator::mutate(const Expr& e) {
    if (!e) return e;
    switch (e->kind) {
#define EXPR_NODE(N) case NodeKind::N: return mutate##N(static_cast<const N*>(e.get()), e);
#include "ir/IRNodes.def"
    default: return e;
    }
}

Stmt IRMutator::mutate(const Stmt& s) {
    if (!s) return s;
    switch (s->kind) {
#define STMT_NODE(N) case NodeKind::N: return mutate##N(static_cast<const N*>(s.get()), s);
#include "ir/IRNodes.def"
    default: return s;
    }
}

std::vector<Expr> IRMutator::mutateAll(const std::vector<Expr>& es, bool& changed) {
    std::vector<Expr> out;
    out.reserve(es.size());
    for (const auto& e : es) {
        out.push_back(mutate(e));
        changed |= !out.back().same(e);
    }
    return out;
}

Expr IRMutator::mutateIntImm(const IntImm*, const Expr& self) { return self; }
Expr IRMutator::mutateFloatImm(const FloatImm*, const Expr& self) { return self; }
Expr IRMutator::mutateVar(const Var*, const Expr& self) { return self; }

Expr IRMutator::mutateCast(const Cast* n, const Expr& self) {
    Expr v = mutate(n->value);
    return v.same(n->value) ? self : cast(n->dtype, v);
}

Expr IRMutator::mutateUnary(const Unary* n, const Expr& self) {
    Expr v = mutate(n->operand);
    return v.same(n->operand) ? self : unary(n->op, v);
}

Expr IRMutator::mutateBinary(const Binary* n, const Expr& self) {
    Expr a = mutate(n->a), b = mutate(n->b);
    return a.same(n->a) && b.same(n->b) ? self : binary(n->op, a, b);
}

Expr IRMutator::mutateSelect(const Select* n, const Expr& self) {
    Expr c = mutate(n->cond), a = mutate(n->thenValue), b = mutate(n->elseValue);
    return c.same(n->cond) && a.same(n->thenValue) && b.same(n->elseValue) ? self : select(c, a, b);
}

Expr IRMutator::mutateCall(const Call* n, const Expr& self) {
    bool changed = false;
    auto args = mutateAll(n->args, changed);
    return changed ? call(n->name, n->dtype, std::move(args)) : self;
}

Expr IRMutator::mutateLoad(const Load* n, const Expr& self) {
    bool changed = false;
    auto idx = mutateAll(n->indices, changed);
    Buffer b = mutateBuffer(n->buffer);
    changed |= b != n->buffer;
    return changed ? load(b, std::move(idx), n->lanes) : self;
}

Stmt IRMutator::mutateSeq(const Seq* n, const Stmt& self) {
    bool changed = false;
    std::vector<Stmt> out;
    for (const auto& s : n->stmts) {
        out.push_back(mutate(s));
        changed |= !out.back().same(s);
    }
    return changed ? seq(std::move(out), n->loc) : self;
}

Stmt IRMutator::mutateLetStmt(const LetStmt* n, const Stmt& self) {
    Expr v = mutate(n->value);
    Stmt b = mutate(n->body);
    return v.same(n->value) && b.same(n->body) ? self : letStmt(n->var, v, b, n->loc);
}

Stmt IRMutator::mutateEvaluate(const Evaluate* n, const Stmt& self) {
    Expr v = mutate(n->value);
    return v.same(n->value) ? self : evaluate(v, n->loc, n->message);
}

Stmt IRMutator::mutateStore(const Store* n, const Stmt& self) {
    bool changed = false;
    auto idx = mutateAll(n->indices, changed);
    Expr v = mutate(n->value);
    Buffer b = mutateBuffer(n->buffer);
    changed |= !v.same(n->value) || b != n->buffer;
    return changed ? store(b, std::move(idx), v, n->loc, n->storeKind) : self;
}

Stmt IRMutator::mutateFor(const For* n, const Stmt& self) {
    Expr mn = mutate(n->min), ext = mutate(n->extent), st = mutate(n->step);
    Stmt b = mutate(n->body);
    if (mn.same(n->min) && ext.same(n->extent) && st.same(n->step) && b.same(n->body)) return self;
    return forLoop(n->var, mn, ext, n->forKind, b, n->loc, n->pipeline, st);
}

Stmt IRMutator::mutateIfThenElse(const IfThenElse* n, const Stmt& self) {
    Expr c = mutate(n->cond);
    Stmt t = mutate(n->thenCase), e = mutate(n->elseCase);
    return c.same(n->cond) && t.same(n->thenCase) && e.same(n->elseCase) ? self : ifThenElse(c, t, e, n->loc);
}

Stmt IRMutator::mutateWhile(const While* n, const Stmt& self) {
    Expr c = mutate(n->cond);
    Stmt b = mutate(n->body);
    return c.same(n->cond) && b.same(n->body) ? self : whileLoop(c, b, n->loc);
}

Stmt IRMutator::mutateAllocate(const Allocate* n, const Stmt& self) {
    Expr init = mutate(n->init);
    Stmt b = mutate(n->body);
    Buffer buf = mutateBuffer(n->buffer);
    if (init.same(n->init) && b.same(n->body) && buf == n->buffer) return self;
    return allocate(buf, b, n->loc, init);
}

Stmt IRMutator::mutateBarrier(const Barrier*, const Stmt& self) { return self; }
Stmt IRMutator::mutateComment(const Comment*, const Stmt& self) { return self; }

Stmt IRMutator::mutateTileOpStmt(const TileOpStmt* n, const Stmt& self) {
    bool changed = false;
    auto op = n->op->mapExprs([&](const Expr& e) {
        Expr m = mutate(e);
        changed |= !m.same(e);
        return m;
    });
    return changed ? tileOp(op, n->loc) : self;
}

// ---- helpers -------------------------------------------------------------------------------

namespace {
class Substituter : public IRMutator {
public:
    explicit Substituter(const std::vector<std::pair<VarPtr, Expr>>& map) : map_(map) {}

protected:
    Expr mutateVar(const Var* n, const Expr& self) override {
        for (const auto& [v, e] : map_)
            if (v.get() == n) return e;
        return self;
    }

private:
    const std::vector<std::pair<VarPtr, Expr>>& map_;
};

class UseFinder : public IRVisitor {
public:
    explicit UseFinder(const Var* v) : target(v) {}
    const Var* target;
    bool found = false;

protected:
    void visitVar(const Var* n) override { found |= n == target; }
};
} // namespace

Expr substitute(const Expr& e, const std::vector<std::pair<VarPtr, Expr>>& map) { return Substituter(map).mutate(e); }
Stmt substitute(const Stmt& s, const std::vector<std::pair<VarPtr, Expr>>& map) { return Substituter(map).mutate(s); }

namespace {
class LoadReplacer : public IRMutator {
public:
    LoadReplacer(const BufferNode* b, const std::function<Expr(const Load*)>& fn) : buffer_(b), fn_(fn) {}

protected:
    Expr mutateLoad(const Load* n, const Expr& self) override {
        Expr inner = IRMutator::mutateLoad(n, self);  // loads in its indices first
        const Load* l = inner.as<Load>();
        return l && l->buffer.get() == buffer_ && l->lanes == 1 ? fn_(l) : inner;
    }

private:
    const BufferNode* buffer_;
    const std::function<Expr(const Load*)>& fn_;
};
} // namespace

Expr replaceLoads(const Expr& e, const BufferNode* b, const std::function<Expr(const Load*)>& fn) {
    return LoadReplacer(b, fn).mutate(e);
}
Stmt replaceLoads(const Stmt& s, const BufferNode* b, const std::function<Expr(const Load*)>& fn) {
    return LoadReplacer(b, fn).mutate(s);
}

bool uses(const Expr& e, const Var* v) {
    UseFinder f(v);
    f.visit(e);
    return f.found;
}

bool uses(const Stmt& s, const Var* v) {
    UseFinder f(v);
    f.visit(s);
    return f.found;
}

bool readsMemory(const Expr& e) {
    class Finder : public IRVisitor {
    public:
        bool found = false;

    protected:
        void visitLoad(const Load*) override { found = true; }
    } f;
    f.visit(e);
    return f.found;
}

bool containsLoop(const Stmt& s, ForKind kind) {
    class Finder : public IRVisitor {
    public:
        explicit Finder(ForKind kind) : kind_(kind) {}
        bool found = false;

    protected:
        void visitFor(const For* n) override {
            found |= n->forKind == kind_;
            IRVisitor::visitFor(n);
        }

    private:
        ForKind kind_;
    } f(kind);
    f.visit(s);
    return f.found;
}

} // namespace tlc::ir

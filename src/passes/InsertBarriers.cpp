// Barrier placement at the tile level, where each statement's shared-memory footprint is
// known: a tile op's regions, or the loads and stores of a parallel loop. Within one such
// statement every thread touches what it owns, or the op synchronises internally; between two
// statements a barrier is needed when the second reads what the first wrote, or writes what
// the first read or wrote. Loops are walked until the state carried around the back edge
// stops growing, so that `copy(A, A_s); gemm(A_s, ...)` in a loop also gets the barrier that
// keeps the next iteration's copy from overwriting A_s while the gemm still reads it.
#include "passes/Passes.h"

#include "ir/TileOp.h"
#include "ir/Visitor.h"

#include <set>

namespace tlc {

using namespace ir;

namespace {

using BufferSet = std::set<const BufferNode*>;

struct State {
    BufferSet reads, writes;
    void clear() { reads.clear(); writes.clear(); }
    void merge(const State& o) {
        reads.insert(o.reads.begin(), o.reads.end());
        writes.insert(o.writes.begin(), o.writes.end());
    }
    friend bool operator==(const State&, const State&) = default;
};

class SharedAccesses : public IRVisitor {
public:
    State s;

protected:
    void visitLoad(const Load* n) override {
        if (n->buffer->scope == MemScope::Shared) s.reads.insert(n->buffer.get());
        IRVisitor::visitLoad(n);
    }
    void visitStore(const Store* n) override {
        if (n->buffer->scope == MemScope::Shared) s.writes.insert(n->buffer.get());
        IRVisitor::visitStore(n);
    }
    void visitTileOpStmt(const TileOpStmt* n) override {
        for (const Region* r : n->op->reads())
            if (r->buffer->scope == MemScope::Shared) s.reads.insert(r->buffer.get());
        for (const Region* r : n->op->writes())
            if (r->buffer->scope == MemScope::Shared) s.writes.insert(r->buffer.get());
        IRVisitor::visitTileOpStmt(n);
    }
};

State accessesOf(const Stmt& s) {
    SharedAccesses a;
    a.visit(s);
    return a.s;
}

State accessesOf(const Expr& e) {
    SharedAccesses a;
    a.visit(e);
    return a.s;
}

bool intersects(const BufferSet& a, const BufferSet& b) {
    for (const auto* x : a)
        if (b.count(x)) return true;
    return false;
}

class Inserter {
public:
    Stmt process(const Stmt& s, State& st) {
        if (!s) return s;
        switch (s->kind) {
        case NodeKind::Seq: {
            std::vector<Stmt> out;
            for (const auto& c : s.as<Seq>()->stmts) out.push_back(process(c, st));
            return seq(out, s->loc);
        }
        case NodeKind::LetStmt: {
            const auto* l = s.as<LetStmt>();
            Stmt pre = leaf(accessesOf(l->value), st, l->loc);
            Stmt body = process(l->body, st);
            return seq({pre, letStmt(l->var, l->value, body, l->loc)});
        }
        case NodeKind::Allocate: {
            const auto* a = s.as<Allocate>();
            return allocate(a->buffer, process(a->body, st), a->loc, a->init);
        }
        case NodeKind::IfThenElse: {
            const auto* i = s.as<IfThenElse>();
            Stmt pre = leaf(accessesOf(i->cond), st, i->loc);
            State elseState = st;
            Stmt t = process(i->thenCase, st);
            Stmt e = process(i->elseCase, elseState);
            st.merge(elseState);
            return seq({pre, ifThenElse(i->cond, t, e, i->loc)});
        }
        case NodeKind::For: {
            const auto* f = s.as<For>();
            if (f->forKind == ForKind::Parallel) return seq({leaf(accessesOf(s), st, f->loc), s});
            State in = st;
            Stmt body;
            for (int round = 0; round < 8; ++round) {
                State end = in;
                body = process(f->body, end);
                State merged = in;
                merged.merge(end);
                if (merged == in) {
                    st = merged;
                    break;
                }
                in = merged;
                st = merged;
            }
            return forLoop(f->var, f->min, f->extent, f->forKind, body, f->loc, f->pipeline, f->step);
        }
        default: return seq({leaf(accessesOf(s), st, s->loc), s});
        }
    }

private:
    // A barrier before a statement with accesses `acc` when they conflict with `st`.
    static Stmt leaf(const State& acc, State& st, SourceLoc loc) {
        bool hazard = intersects(acc.reads, st.writes) || intersects(acc.writes, st.writes) ||
                      intersects(acc.writes, st.reads);
        Stmt b;
        if (hazard) {
            b = barrier(loc);
            st.clear();
        }
        st.merge(acc);
        return b;
    }
};

} // namespace

Stmt insertBarriers(const Stmt& body) {
    State st;
    return Inserter().process(body, st);
}

} // namespace tlc

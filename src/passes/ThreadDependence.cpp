// ThreadDependence.h: what of the expert level's code differs between threads.
#include "passes/ThreadDependence.h"

#include "ir/Visitor.h"

namespace tlc {

using namespace ir;

bool isCollective(const std::string& n) {
    return n == "shfl_xor" || n == "shfl_down" || n == "shfl_up" || n == "shfl_idx" || n.rfind("warp_reduce_", 0) == 0;
}

bool isBlockReduce(const std::string& n) { return n.rfind("block_reduce_", 0) == 0; }

Expr combineReduction(const std::string& reduction, Expr a, Expr b) {
    if (reduction.ends_with("_sum")) return a + b;
    if (reduction.ends_with("_max")) return maxExpr(std::move(a), std::move(b));
    return minExpr(std::move(a), std::move(b));
}

namespace {

// Statements where every thread must have arrived before any goes on.
class HasSplit : public IRVisitor {
public:
    bool found = false;

protected:
    void visitBarrier(const Barrier*) override { found = true; }
    void visitTileOpStmt(const TileOpStmt*) override { found = true; }
    void visitCall(const Call* n) override {
        found = found || n->name == "sync_warp" || isCollective(n->name);
        IRVisitor::visitCall(n);
    }
    void visitFor(const For* n) override {
        found = found || n->forKind == ForKind::Parallel || n->forKind == ForKind::Pipelined;
        IRVisitor::visitFor(n);
    }
};


} // namespace

bool hasSplit(const Stmt& s) {
    HasSplit v;
    v.visit(s);
    return v.found;
}

// One pass over the body: lets computed from thread-dependent values, and local buffers
// stored with such values, at such indices or under such conditions.
class ThreadDependenceFinder : public IRVisitor {
public:
    explicit ThreadDependenceFinder(ThreadDependence& d) : d_(d) {}
    bool changed = false;

protected:
    void visitStore(const Store* n) override {
        bool dependent = depth_ > 0 || d_.varies(n->value);
        for (const auto& i : n->indices) dependent = dependent || d_.varies(i);
        if (dependent && n->buffer->scope == MemScope::Local && d_.buffers_.insert(n->buffer.get()).second) changed = true;
        IRVisitor::visitStore(n);
    }
    void visitLetStmt(const LetStmt* n) override {
        if (d_.varies(n->value) && d_.vars_.insert(n->var.get()).second) changed = true;
        IRVisitor::visitLetStmt(n);
    }
    void visitIfThenElse(const IfThenElse* n) override { under(d_.varies(n->cond), [&] { IRVisitor::visitIfThenElse(n); }); }
    void visitFor(const For* n) override {
        under(d_.varies(n->min) || d_.varies(n->extent) || (n->step && d_.varies(n->step)), [&] { IRVisitor::visitFor(n); });
    }
    void visitWhile(const While* n) override { under(d_.varies(n->cond), [&] { IRVisitor::visitWhile(n); }); }

private:
    template <typename F> void under(bool dependent, F f) {
        depth_ += dependent;
        f();
        depth_ -= dependent;
    }
    ThreadDependence& d_;
    int depth_ = 0;
};

ThreadDependence::ThreadDependence(const Stmt& body, const Var* threadIndex) : tx_(threadIndex) {
    if (!tx_) return;
    for (bool changed = true; changed;) {
        ThreadDependenceFinder finder(*this);
        finder.visit(body);
        changed = finder.changed;
    }
}

bool ThreadDependence::varies(const Expr& e) const {
    if (!e || !tx_) return false;
    class Reads : public IRVisitor {
    public:
        explicit Reads(const ThreadDependence& d) : d_(d) {}
        bool found = false;

    protected:
        void visitVar(const Var* v) override { found = found || v == d_.tx_ || d_.vars_.count(v); }
        void visitLoad(const Load* n) override {
            found = found || d_.buffers_.count(n->buffer.get());
            IRVisitor::visitLoad(n);
        }
        void visitCall(const Call* n) override {
            found = found || isCollective(n->name);
            IRVisitor::visitCall(n);
        }

    private:
        const ThreadDependence& d_;
    } r(*this);
    r.visit(e);
    return r.found;
}

} // namespace tlc

#include "ir/Accesses.h"

#include "ir/TileOp.h"

namespace tlc::ir {

void AccessVisitor::visitLoad(const Load* n) {
    onAccess({Access::Via::Load, n->buffer, n->indices, nullptr});
    IRVisitor::visitLoad(n);
}

void AccessVisitor::visitStore(const Store* n) {
    Access a{Access::Via::Store, n->buffer, n->indices, nullptr};
    a.write = true;
    a.storeKind = n->storeKind;
    onAccess(a);
    IRVisitor::visitStore(n);
}

void AccessVisitor::visitTileOpStmt(const TileOpStmt* n) {
    for (bool write : {false, true})
        for (const Region* r : write ? n->op->writes() : n->op->reads()) {
            Access a{Access::Via::Region, r->buffer, r->starts, &r->extents};
            a.write = write;
            a.op = n->op.get();
            onAccess(a);
        }
    IRVisitor::visitTileOpStmt(n);
}

bool AccessVisitor::visitAddress(const Call* c, const Call* taker, size_t k) {
    const Load* l = c && c->name == "address_of" && !c->args.empty() ? c->args[0].as<Load>() : nullptr;
    if (!l) return false;
    Access a{Access::Via::Address, l->buffer, l->indices, nullptr};
    a.call = taker;
    a.argument = k;
    onAccess(a);
    for (const Expr& i : l->indices) visit(i);
    for (size_t j = 1; j < c->args.size(); ++j) visit(c->args[j]);
    return true;
}

void AccessVisitor::visitCall(const Call* n) {
    if (visitAddress(n, nullptr, 0)) return;
    for (size_t k = 0; k < n->args.size(); ++k)
        if (!visitAddress(n->args[k].as<Call>(), n, k)) visit(n->args[k]);
}

namespace {

class FootprintCollector : public AccessVisitor {
public:
    Footprint f;

protected:
    void onAccess(const Access& a) override {
        (a.write ? f.writes : f.reads).insert(a.buffer.get());
        ++f.accesses[a.buffer.get()];
    }
    void visitTileOpStmt(const TileOpStmt* n) override {
        f.ops.push_back(n->op.get());
        AccessVisitor::visitTileOpStmt(n);
    }
};

} // namespace

Footprint Footprint::of(const Stmt& s) {
    FootprintCollector c;
    c.visit(s);
    return std::move(c.f);
}

Footprint Footprint::of(const Expr& e) {
    FootprintCollector c;
    c.visit(e);
    return std::move(c.f);
}

} // namespace tlc::ir

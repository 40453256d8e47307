#include "passes/BufferUses.h"

#include "ir/Accesses.h"
#include "ir/TileOp.h"
#include "ops/annotate_layout/AnnotateLayout.h"

#include <set>

namespace tlc {

using namespace ir;

namespace {

// Every load, store and address once; a tile op once per buffer it names.
class CountUses : public AccessVisitor {
public:
    explicit CountUses(LayoutAnnotations annotations) : annotations_(annotations) {}
    std::map<const BufferNode*, int> uses;

protected:
    void onAccess(const Access& a) override {
        if (a.via != Access::Via::Region) ++uses[a.buffer.get()];
    }
    void visitTileOpStmt(const TileOpStmt* n) override {
        std::set<const BufferNode*> named;
        for (const Region* r : n->op->reads()) named.insert(r->buffer.get());
        for (const Region* r : n->op->writes()) named.insert(r->buffer.get());
        const auto* a = dynamic_cast<const ops::AnnotateLayoutOp*>(n->op.get());
        if (a && annotations_ == LayoutAnnotations::AreUses) named.insert(a->buffer().get());
        for (const BufferNode* b : named) ++uses[b];
        AccessVisitor::visitTileOpStmt(n);
    }

private:
    LayoutAnnotations annotations_;
};

} // namespace

std::set<const BufferNode*> writtenTensors(const Stmt& body) {
    Footprint f = Footprint::of(body);
    std::set<const BufferNode*> written;
    for (const BufferNode* b : f.writes)
        if (b->scope == MemScope::Global) written.insert(b);
    return written;
}

std::map<const BufferNode*, int> countBufferUses(const Stmt& s, LayoutAnnotations annotations) {
    CountUses counter(annotations);
    counter.visit(s);
    return counter.uses;
}

} // namespace tlc

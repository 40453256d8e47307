#include "passes/BufferUses.h"

#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "ops/annotate_layout/AnnotateLayout.h"

#include <set>

namespace tlc {

using namespace ir;

namespace {
class CountUses : public IRVisitor {
public:
    explicit CountUses(LayoutAnnotations annotations) : annotations_(annotations) {}
    std::map<const BufferNode*, int> uses;

protected:
    void visitLoad(const Load* n) override {
        ++uses[n->buffer.get()];
        IRVisitor::visitLoad(n);
    }
    void visitStore(const Store* n) override {
        ++uses[n->buffer.get()];
        IRVisitor::visitStore(n);
    }
    void visitTileOpStmt(const TileOpStmt* n) override {
        std::set<const BufferNode*> named;
        for (const Region* r : n->op->reads()) named.insert(r->buffer.get());
        for (const Region* r : n->op->writes()) named.insert(r->buffer.get());
        const auto* a = dynamic_cast<const ops::AnnotateLayoutOp*>(n->op.get());
        if (a && annotations_ == LayoutAnnotations::AreUses) named.insert(a->buffer().get());
        for (const BufferNode* b : named) ++uses[b];
        IRVisitor::visitTileOpStmt(n);
    }

private:
    LayoutAnnotations annotations_;
};
} // namespace

std::set<const BufferNode*> writtenTensors(const Stmt& body) {
    class Writes : public IRVisitor {
    public:
        std::set<const BufferNode*> written;

    protected:
        void visitStore(const Store* n) override {
            if (n->buffer->scope == MemScope::Global) written.insert(n->buffer.get());
            IRVisitor::visitStore(n);
        }
        void visitTileOpStmt(const TileOpStmt* n) override {
            for (const Region* r : n->op->writes())
                if (r->buffer->scope == MemScope::Global) written.insert(r->buffer.get());
            IRVisitor::visitTileOpStmt(n);
        }
    } writes;
    writes.visit(body);
    return writes.written;
}

std::map<const BufferNode*, int> countBufferUses(const Stmt& s, LayoutAnnotations annotations) {
    CountUses counter(annotations);
    counter.visit(s);
    return counter.uses;
}

} // namespace tlc

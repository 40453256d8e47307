// Carries out the shared-memory layouts chosen with the fragment layouts (ctx.sharedLayouts):
// every load and store of a swizzled buffer, vector ones and the addresses taken for cp.async
// and ldmatrix included, gets its last index permuted by the swizzle of its row; a padded
// buffer is declared with longer rows; a boxed one ([rows, cols] stored as [cols / box, rows,
// box], wgmma's canonical layout) gets a dimension more; alignment beyond 16 bytes goes on the
// declared buffer. Done once after the tile ops are lowered, so that no op
// has to know how a buffer is stored.
#include "passes/Passes.h"

#include "ir/Visitor.h"

#include <map>
#include <optional>

namespace tlc {

using namespace ir;

namespace {

class SharedLayoutApplier : public IRMutator {
public:
    explicit SharedLayoutApplier(const LowerContext& ctx) : ctx_(ctx) {}

protected:
    Stmt mutateAllocate(const Allocate* n, const Stmt& self) override {
        Stmt body = mutate(n->body);
        Buffer b = stored(n->buffer);
        return b == n->buffer && body.same(n->body) ? self : allocate(b, body, n->loc, n->init);
    }

    Expr mutateLoad(const Load* n, const Expr& self) override {
        Expr e = IRMutator::mutateLoad(n, self);
        const auto* l = e.as<Load>();
        if (auto p = placed(l->buffer, l->indices)) return load(p->buffer, p->indices, l->lanes);
        return e;
    }

    Stmt mutateStore(const Store* n, const Stmt& self) override {
        Stmt s = IRMutator::mutateStore(n, self);
        const auto* st = s.as<Store>();
        if (auto p = placed(st->buffer, st->indices)) return store(p->buffer, p->indices, st->value, st->loc, st->storeKind);
        return s;
    }

private:
    const LowerContext& ctx_;
    std::map<const BufferNode*, Buffer> padded_;

    const LowerContext::SharedLayout* layoutOf(const Buffer& b) const {
        if (b->scope != MemScope::Shared || b->shape.size() < 2) return nullptr;
        auto it = ctx_.sharedLayouts.find(b.get());
        return it == ctx_.sharedLayouts.end() ? nullptr : &it->second;
    }

public:
    // The buffer as declared: with padded rows, boxes or alignment where asked, the same node
    // otherwise.
    Buffer stored(const Buffer& b) {
        const auto* l = layoutOf(b);
        if (!l || (l->padElems == 0 && l->boxCols == 0 && l->alignBytes == 0)) return b;
        auto it = padded_.find(b.get());
        if (it != padded_.end()) return it->second;
        std::vector<Expr> shape = b->shape;
        const int64_t* cols = asConstInt(shape.back());
        if (l->padElems) shape.back() = cols ? intImm(*cols + l->padElems) : shape.back() + intImm(l->padElems);
        if (l->boxCols) {
            shape.insert(shape.end() - 2, intImm(*cols / l->boxCols));
            shape.back() = intImm(l->boxCols);
        }
        auto node = std::make_shared<BufferNode>(*makeBuffer(b->name, b->dtype, b->scope, shape));
        node->alignBytes = l->alignBytes;
        node->pipeline = b->pipeline;
        padded_[b.get()] = node;
        return node;
    }

private:

    // Where an access goes once the layout is applied: the declared buffer and the swizzled
    // last index. Nothing when the access stays as it is.
    struct Access {
        Buffer buffer;
        std::vector<Expr> indices;
    };
    std::optional<Access> placed(const Buffer& b, const std::vector<Expr>& indices) {
        const auto* l = layoutOf(b);
        if (!l) return std::nullopt;
        Access out{stored(b), indices};
        Expr row = indices[indices.size() - 2], col = indices.back();
        if (l->boxCols) {
            out.indices.insert(out.indices.end() - 2, col / l->boxCols);
            col = col % l->boxCols;
        }
        if (!l->swizzle.isIdentity()) col = l->swizzle.column(row, col);
        out.indices.back() = col;
        return out;
    }
};

} // namespace

Stmt applySharedLayouts(const Stmt& body, LowerContext& ctx) {
    if (ctx.sharedLayouts.empty()) return body;
    SharedLayoutApplier applier(ctx);
    Stmt out = applier.mutate(body);
    // Scratch buffers are declared later (plan-shared-memory): as stored.
    for (const Buffer& b : std::vector<Buffer>(ctx.scratchBuffers())) ctx.replaceScratch(b, applier.stored(b));
    return out;
}

} // namespace tlc

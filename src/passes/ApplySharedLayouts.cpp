// Carries out the shared-memory layouts chosen with the fragment layouts (ctx.sharedLayouts):
// every load and store of a swizzled buffer, vector ones and the addresses taken for cp.async
// and ldmatrix included, gets its last index permuted by the swizzle of its row; a padded
// buffer is declared with longer rows. Done once after the tile ops are lowered, so that no op
// has to know how a buffer is stored.
#include "passes/Passes.h"

#include "ir/Visitor.h"
#include "layout/Layout.h"

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

    // The buffer's layout (layout/Layout.h), when it has one other than row-major.
    std::optional<layout::Layout> layoutOf(const Buffer& b) const {
        if (b->scope != MemScope::Shared || b->shape.size() < 2) return std::nullopt;
        auto it = ctx_.sharedLayouts.find(b.get());
        std::vector<int64_t> shape;
        if (it == ctx_.sharedLayouts.end() || !constantShape(b, shape)) return std::nullopt;
        return layout::Layout::rowMajor(shape, it->second.padElems).compose(it->second.swizzle);
    }

    // The buffer as declared: with padded rows where asked, the same node otherwise.
    Buffer stored(const Buffer& b) {
        auto l = layoutOf(b);
        if (!l || l->pad() == 0) return b;
        auto it = padded_.find(b.get());
        if (it != padded_.end()) return it->second;
        std::vector<Expr> shape;
        for (int64_t e : l->storedShape()) shape.push_back(intImm(e));
        Buffer p = makeBuffer(b->name, b->dtype, b->scope, shape);
        padded_[b.get()] = p;
        return p;
    }

    // Where an access goes once the layout is applied: the declared buffer and the stored
    // indices. Nothing when the access stays as it is.
    struct Access {
        Buffer buffer;
        std::vector<Expr> indices;
    };
    std::optional<Access> placed(const Buffer& b, const std::vector<Expr>& indices) {
        auto l = layoutOf(b);
        if (!l) return std::nullopt;
        return Access{stored(b), l->storedIndices(indices)};
    }
};

} // namespace

Stmt applySharedLayouts(const Stmt& body, const LowerContext& ctx) {
    if (ctx.sharedLayouts.empty()) return body;
    return SharedLayoutApplier(ctx).mutate(body);
}

} // namespace tlc

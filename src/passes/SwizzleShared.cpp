// Applies the swizzled layouts layout inference chose for shared buffers (ctx.sharedLayouts):
// every load and store of such a buffer, vector ones and the addresses taken for cp.async and
// ldmatrix included, gets its last index permuted by the swizzle of its row. Done once after
// the tile ops are lowered, so that no op has to know which buffers are swizzled.
#include "passes/Passes.h"

#include "ir/Visitor.h"

#include <optional>

namespace tlc {

using namespace ir;

namespace {

class Swizzler : public IRMutator {
public:
    explicit Swizzler(const LowerContext& ctx) : ctx_(ctx) {}

protected:
    Expr mutateLoad(const Load* n, const Expr& self) override {
        Expr e = IRMutator::mutateLoad(n, self);
        const auto* l = e.as<Load>();
        if (auto idx = swizzled(l->buffer, l->indices)) return load(l->buffer, *idx, l->lanes);
        return e;
    }

    Stmt mutateStore(const Store* n, const Stmt& self) override {
        Stmt s = IRMutator::mutateStore(n, self);
        const auto* st = s.as<Store>();
        if (auto idx = swizzled(st->buffer, st->indices)) return store(st->buffer, *idx, st->value, st->loc, st->storeKind);
        return s;
    }

private:
    const LowerContext& ctx_;

    std::optional<std::vector<Expr>> swizzled(const Buffer& b, const std::vector<Expr>& indices) const {
        if (b->scope != MemScope::Shared || indices.size() < 2) return std::nullopt;
        layout::Swizzle sw = ctx_.swizzleOf(b);
        if (sw.isIdentity()) return std::nullopt;
        std::vector<Expr> out = indices;
        out.back() = sw.column(indices[indices.size() - 2], indices.back());
        return out;
    }
};

} // namespace

Stmt swizzleShared(const Stmt& body, const LowerContext& ctx) {
    if (ctx.sharedLayouts.empty()) return body;
    return Swizzler(ctx).mutate(body);
}

} // namespace tlc

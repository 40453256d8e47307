#include "ops/ElementProducer.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/Visitor.h"
#include "ops/OpUtil.h"
#include "ops/parallel/Parallel.h"

#include <fmt/format.h>

namespace tlc::ops {

using namespace ir;

std::string producerString(const Buffer& tile, const ElementProducer& p) {
    std::vector<std::string> vars;
    for (const auto& v : p.vars) vars.push_back(v->name);
    return fmt::format("{}[{}] = {}{}", tile->name, fmt::join(vars, ", "), printExpr(p.value),
                       p.stores ? " (stored)" : "");
}

std::optional<Expr> producedAt(LowerContext& ctx, const ElementProducer& p, const std::vector<Expr>& at) {
    std::vector<std::pair<VarPtr, Expr>> bind;
    for (size_t d = 0; d < at.size(); ++d) bind.push_back({p.vars[d], at[d]});
    // Fragment loads become loads of the cpu's row-major locals.
    class Localize : public IRMutator {
    public:
        Localize(LowerContext& c) : ctx(c) {}
        LowerContext& ctx;
        bool ok = true;

    protected:
        Expr mutateLoad(const Load* n, const Expr& self) override {
            if (n->buffer->scope != MemScope::Fragment) return IRMutator::mutateLoad(n, self);
            if (!isCpuTile(ctx, ctx.layoutOf(n->buffer))) {
                ok = false;
                return self;
            }
            std::vector<Expr> idx;
            for (const auto& i : n->indices) idx.push_back(mutate(i));
            return load(ctx.localBuffer(n->buffer), {flatIndex(n->buffer, idx)});
        }
    } localize(ctx);
    Expr value = localize.mutate(substitute(p.value, bind));
    if (!localize.ok) return std::nullopt;
    return simplify(value, ctx.bounds());
}

Stmt producerLoop(LowerContext& ctx, const ElementProducer& p, const Region& tile, SourceLoc loc) {
    ParallelNest nest;
    nest.vars = p.vars;
    nest.extents = tile.extents;
    std::vector<Expr> idx(nest.vars.begin(), nest.vars.end());
    nest.body = store(tile.buffer, idx, p.value, loc);
    nest.loc = loc;
    return lowerParallel(ctx, nest);
}

} // namespace tlc::ops

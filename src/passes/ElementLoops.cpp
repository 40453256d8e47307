#include "passes/ElementLoops.h"

#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "ops/OpUtil.h"

namespace tlc {

using namespace ir;

namespace {

// True when e reads no memory but fragments and tensors outside `written` at indices inside
// them for every value in `loop`.
bool readsOnlyFragments(const Expr& e, const std::set<const BufferNode*>& written, const VarBounds& loop) {
    class Check : public IRVisitor {
    public:
        const std::set<const BufferNode*>* written;
        const VarBounds* loop;
        bool ok = true;

    protected:
        void visitLoad(const Load* n) override {
            if (n->buffer->scope == MemScope::Global) ok = ok && allowed(n);
            else if (n->buffer->scope != MemScope::Fragment) ok = false;
            IRVisitor::visitLoad(n);
        }
        bool allowed(const Load* n) const {
            if (written->count(n->buffer.get())) return false;
            const Expr condition = simplify(ops::inBounds(n->buffer, n->indices, n->lanes), *loop);
            const int64_t* inside = asConstInt(condition);  // points into condition
            return inside && *inside;
        }
    } check;
    check.written = &written;
    check.loop = &loop;
    check.visit(e);
    return check.ok;
}

} // namespace

ops::ElementProducer ElementLoop::producer(bool stores) const {
    ops::ElementProducer p{nest.vars, value, {}, stores};
    std::set<const BufferNode*> read;
    for (const auto& a : ops::fragmentAccesses(nest.body))
        if (!a.isStore && read.insert(a.buffer.get()).second) p.reads.push_back(wholeBuffer(a.buffer));
    return p;
}

std::optional<ElementLoop> elementLoop(const Stmt& s, const std::set<const BufferNode*>& written,
                                       const VarBounds& bounds) {
    const For* outer = s.as<For>();
    if (!outer || outer->forKind != ForKind::Parallel) return std::nullopt;
    std::optional<ops::ParallelNest> nest = ops::parallelNest(outer);
    if (!nest) return std::nullopt;
    // `let`s before the store are folded into its value (the C++ compiler shares them again).
    std::vector<std::pair<VarPtr, Expr>> lets;
    Stmt inner = nest->body;
    while (const LetStmt* let = inner.as<LetStmt>()) {
        lets.push_back({let->var, let->value});
        inner = let->body;
    }
    const Store* st = inner.as<Store>();
    if (!st || st->storeKind != StoreKind::Plain || st->buffer->scope != MemScope::Fragment ||
        !ops::indicesAre(st->indices, nest->vars))
        return std::nullopt;
    Expr value = st->value;
    for (size_t k = lets.size(); k-- > 0;) value = substitute(value, {lets[k]});
    VarBounds loop = bounds;
    for (size_t d = 0; d < nest->vars.size(); ++d)
        loop.push_back({nest->vars[d].get(), Interval{0, nest->extents[d] - 1}});
    if (!readsOnlyFragments(value, written, loop) || !ops::loadsOnlyAt(value, st->buffer.get(), &nest->vars))
        return std::nullopt;
    return ElementLoop{*nest, st->buffer, value};
}

} // namespace tlc

// Staging copies on the cpu. A kernel written for GPUs stages global tiles through shared
// memory (`copy(X[..], x_s); copy(x_s, x)`) for coalescing and layout changes; on the cpu shared
// memory is ordinary memory, so the stage is a second pass over the tile and nothing more. Two
// adjacent copies `copy(G[..], S); copy(S, F)` where S (shared or a fragment) is used by nothing
// else, both copies take all of S, and S has G's element type (so that it changes no value)
// become `copy(G[..], F)`, and S is not allocated. Reads past G's end still give zero.
#include "passes/BufferUses.h"
#include "passes/Passes.h"

#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "ops/copy/Copy.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace tlc {

using namespace ir;

namespace {

const ops::CopyOp* plainCopy(const Stmt& s) {
    const TileOpStmt* t = s.as<TileOpStmt>();
    const auto* c = t ? dynamic_cast<const ops::CopyOp*>(t->op.get()) : nullptr;
    return c && !c->async() && !c->tmaBarrier() ? c : nullptr;
}

class Forward : public IRMutator {
public:
    Forward(std::map<const BufferNode*, int> uses, LowerContext& ctx) : uses_(std::move(uses)), ctx_(ctx) {}
    std::set<const BufferNode*> dropped;

protected:
    Stmt mutateSeq(const Seq* n, const Stmt& self) override {
        std::vector<Stmt> out;
        bool changed = false;
        for (size_t i = 0; i < n->stmts.size(); ++i) {
            const ops::CopyOp* in = plainCopy(n->stmts[i]);
            const ops::CopyOp* on = i + 1 < n->stmts.size() ? plainCopy(n->stmts[i + 1]) : nullptr;
            if (in && on && forwardable(*in, *on)) {
                const Buffer& stage = in->dst().buffer;
                out.push_back(tileOp(std::make_shared<ops::CopyOp>(in->src(), on->dst()), n->stmts[i]->loc));
                dropped.insert(stage.get());
                ctx_.decide(stage->name, "not allocated", "forward-copies",
                            fmt::format("on the cpu shared memory is ordinary memory: {} is copied into {} directly",
                                        in->src().buffer->name, on->dst().buffer->name),
                            n->stmts[i]->loc);
                changed = true;
                ++i;
                continue;
            }
            out.push_back(mutate(n->stmts[i]));
            changed |= !out.back().same(n->stmts[i]);
        }
        return changed ? seq(std::move(out), n->loc) : self;
    }
    // A pipelined loop's order/stage lists count its statements: its body stays as written.
    Stmt mutateFor(const For* n, const Stmt& self) override {
        return n->forKind == ForKind::Pipelined ? self : IRMutator::mutateFor(n, self);
    }
    Stmt mutateAllocate(const Allocate* n, const Stmt& self) override {
        Stmt body = mutate(n->body);
        if (dropped.count(n->buffer.get())) return body;
        return body.same(n->body) ? self : allocate(n->buffer, body, n->loc, n->init);
    }

private:
    std::map<const BufferNode*, int> uses_;
    LowerContext& ctx_;

    bool forwardable(const ops::CopyOp& in, const ops::CopyOp& on) const {
        const Buffer& stage = in.dst().buffer;
        auto count = uses_.find(stage.get());
        return in.src().buffer->scope == MemScope::Global &&
               (stage->scope == MemScope::Shared || stage->scope == MemScope::Fragment) &&
               on.src().buffer == stage && in.dst().coversWholeBuffer() && on.src().coversWholeBuffer() &&
               stage->dtype == in.src().buffer->dtype && count != uses_.end() && count->second == 2;
    }
};

} // namespace

Stmt forwardCopies(const Stmt& body, LowerContext& ctx) {
    if (ctx.target.backend != Backend::Cpu) return body;
    Forward forward(countBufferUses(body), ctx);
    return forward.mutate(body);
}

} // namespace tlc

// Shared memory as one pool per block. The ops' scratch buffers are declared at the top of the
// kernel; every shared buffer gets a live range (passes/SharedLiveness.h) and an offset, and
// buffers whose live ranges do not overlap share bytes. Where a buffer reuses bytes another
// one used before, a barrier must separate the last use of the old from the first use of the
// new (other threads may still read the old one); one is inserted where none is already
// reached by every thread in between. The total must fit the target.
#include "passes/Passes.h"

#include "passes/SharedLiveness.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace tlc {

using namespace ir;

namespace {

// Puts a barrier before the statement holding position b, in the innermost sequence that also
// holds position a before it, for every (a, b) asked for. Positions are those of
// sharedLiveness() on `s`, which starts at `base`.
class BarrierPlacer {
public:
    Stmt place(const Stmt& s, int base, const std::vector<std::pair<int, int>>& needs) {
        if (!s || needs.empty()) return s;
        switch (s->kind) {
        case NodeKind::Seq: {
            const auto& stmts = s.as<Seq>()->stmts;
            std::vector<int> starts;
            int at = base + 1;
            for (const auto& c : stmts) {
                starts.push_back(at);
                at += statementCount(c);
            }
            auto childOf = [&](int pos) {
                int k = -1;
                for (size_t i = 0; i < starts.size(); ++i)
                    if (starts[i] <= pos) k = int(i);
                return k;
            };
            std::set<int> before;
            std::vector<std::vector<std::pair<int, int>>> inner(stmts.size());
            for (auto [a, b] : needs) {
                int i = childOf(a), j = childOf(b);
                if (i == j) inner[size_t(i)].emplace_back(a, b);
                else before.insert(j);
            }
            std::vector<Stmt> out;
            for (size_t i = 0; i < stmts.size(); ++i) {
                if (before.count(int(i))) out.push_back(barrier(stmts[i]->loc));
                out.push_back(place(stmts[i], starts[i], inner[i]));
            }
            return seq(out, s->loc);
        }
        case NodeKind::LetStmt: {
            const auto* l = s.as<LetStmt>();
            return letStmt(l->var, l->value, body(l->body, base, needs), l->loc);
        }
        case NodeKind::Allocate: {
            const auto* a = s.as<Allocate>();
            return allocate(a->buffer, body(a->body, base, needs), a->loc, a->init);
        }
        case NodeKind::For: {
            const auto* f = s.as<For>();
            return forLoop(f->var, f->min, f->extent, f->forKind, body(f->body, base, needs), f->loc, f->pipeline,
                           f->step);
        }
        case NodeKind::While: {
            const auto* w = s.as<While>();
            return whileLoop(w->cond, body(w->body, base, needs), w->loc);
        }
        case NodeKind::IfThenElse: {
            // Needs across the two branches need nothing: no thread runs both.
            const auto* i = s.as<IfThenElse>();
            int elseBase = base + 1 + statementCount(i->thenCase);
            std::vector<std::pair<int, int>> thenNeeds, elseNeeds;
            for (auto [a, b] : needs) {
                bool bElse = b >= elseBase;
                if (a == base || (a < elseBase) == !bElse) (bElse ? elseNeeds : thenNeeds).emplace_back(a, b);
            }
            return ifThenElse(i->cond, branch(i->thenCase, base + 1, thenNeeds, base),
                              branch(i->elseCase, elseBase, elseNeeds, base), i->loc);
        }
        default: return s;
        }
    }

private:
    // The single child of a statement at `base`: a need from the statement's own expressions
    // puts the barrier first in it.
    Stmt body(const Stmt& child, int base, const std::vector<std::pair<int, int>>& needs) {
        return branch(child, base + 1, needs, base);
    }
    Stmt branch(const Stmt& child, int childBase, const std::vector<std::pair<int, int>>& needs, int parent) {
        bool first = false;
        std::vector<std::pair<int, int>> inner;
        for (auto [a, b] : needs) {
            if (a == parent) first = true;
            else inner.emplace_back(a, b);
        }
        Stmt out = place(child, childBase, inner);
        return first ? seq({barrier(child ? child->loc : SourceLoc{}), out}) : out;
    }
};

} // namespace

Stmt planSharedMemory(Kernel& kernel, const Stmt& body, LowerContext& ctx) {
    Stmt out = body;
    for (auto it = ctx.scratchBuffers().rbegin(); it != ctx.scratchBuffers().rend(); ++it) out = allocate(*it, out, kernel.loc);

    SharedLiveness live = sharedLiveness(out);
    std::vector<int64_t> bytes, aligns;
    for (const auto& l : live.buffers) {
        bytes.push_back(sharedBufferBytes(l.buffer));
        aligns.push_back(sharedAlignment(l.buffer, ctx));
    }
    // On the cpu every shared buffer is an array of its own (one thread: nothing to gain).
    Placement placed = placeBuffers(live.buffers, bytes, aligns, ctx.target.backend != Backend::Cpu);

    std::vector<std::pair<int, int>> needs;
    for (size_t i = 0; i < live.buffers.size(); ++i)
        for (size_t j = 0; j < live.buffers.size(); ++j) {
            const SharedLife &x = live.buffers[i], &y = live.buffers[j];
            bool shareBytes = placed.offsets[i] < placed.offsets[j] + bytes[j] && placed.offsets[j] < placed.offsets[i] + bytes[i];
            if (i != j && shareBytes && x.last < y.first && !live.barrierBetween(x.last, y.first))
                needs.emplace_back(x.last, y.first);
        }
    if (!needs.empty()) {
        out = BarrierPlacer().place(out, 0, needs);
        live = sharedLiveness(out);  // the same ranges, renumbered
    }

    kernel.sharedBytes = placed.total;
    kernel.sharedPlan.clear();
    for (size_t i = 0; i < live.buffers.size(); ++i) {
        const SharedLife& l = live.buffers[i];
        kernel.sharedPlan.push_back({l.buffer, placed.offsets[i], bytes[i], aligns[i], l.first, l.last, l.firstLoc, l.lastLoc});
    }
    if (placed.total > ctx.target.sharedMemPerBlock)
        ctx.diags.report(DiagId::err_shared_memory_total, SourceRange(kernel.loc), placed.total, ctx.target.name,
                         ctx.target.sharedMemPerBlock);
    return out;
}

std::string describeSharedPlan(const Kernel& kernel) {
    std::string out = fmt::format("kernel {}: {} bytes of shared memory\n", kernel.name, kernel.sharedBytes);
    auto line = [](SourceLoc l) { return l.valid() ? std::to_string(l.line) : std::string("?"); };
    for (const auto& s : kernel.sharedPlan) {
        std::string dims, shares;
        for (const auto& d : s.buffer->shape) dims += fmt::format("[{}]", asConstInt(d) ? *asConstInt(d) : 0);
        for (const auto& o : kernel.sharedPlan)
            if (&o != &s && o.offset < s.offset + s.bytes && s.offset < o.offset + o.bytes)
                shares += (shares.empty() ? ", shares bytes with " : ", ") + o.buffer->name;
        out += fmt::format("  {}: {}{}, offset {}, {} bytes, align {}, live {}..{} (lines {}..{}){}\n", s.buffer->name,
                           dtypeName(s.buffer->dtype), dims, s.offset, s.bytes, s.align, s.first, s.last,
                           line(s.firstLoc), line(s.lastLoc), shares);
    }
    return out;
}

} // namespace tlc

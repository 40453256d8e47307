// Shared memory as one pool per block. The ops' scratch buffers are declared at the top of the
// kernel; every shared buffer gets a live range (passes/SharedLiveness.h) and an offset, and
// buffers whose live ranges do not overlap share bytes. Where a buffer reuses bytes another
// one used before, a barrier must separate the last use of the old from the first use of the
// new (other threads may still read the old one); one is inserted where none is already
// reached by every thread in between. The total must fit the target: this is the one check of
// the kernel's shared memory (sema only refuses a buffer that alone exceeds it), and its error
// names the buffers live where the most bytes are (stages, tiles and the compiler's scratch
// buffers all show there), or hands a loop whose `stages` were inferred back to lowerKernel,
// which lowers again with fewer.
#include "passes/Passes.h"

#include "passes/SharedLiveness.h"

#include "ir/Visitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
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

// Where each shared buffer is declared (the author's `let`), by name.
std::map<std::string, SourceLoc> allocationLocs(const Stmt& body) {
    class Finder : public IRVisitor {
    public:
        std::map<std::string, SourceLoc> locs;

    protected:
        void visitAllocate(const Allocate* n) override {
            if (n->buffer->scope == MemScope::Shared && n->loc.valid()) locs.emplace(n->buffer->name, n->loc);
            IRVisitor::visitAllocate(n);
        }
    } f;
    f.visit(body);
    return f.locs;
}

std::string lineOf(SourceLoc l) { return l.valid() ? fmt::format("line {}", l.line) : std::string("the kernel"); }

// The pool does not fit: report it with the buffers live at the peak, or (an inferred `stages`
// live there) ask lowerKernel for fewer stages. `out` is the planned body.
void reportOverflow(const Kernel& kernel, const Stmt& out, const SharedLiveness& live, const std::vector<int64_t>& bytes,
                    const std::vector<int64_t>& aligns, int64_t total, LowerContext& ctx, StageInference& stages) {
    const int64_t limit = ctx.target.sharedMemPerBlock;
    SharedPeak peak = sharedPeak(live, bytes);
    // A tile's versions that the software pipeline made (BufferNode::pipeline).
    auto pipelined = [&](size_t i) -> const PipelineBuffer* {
        const auto& p = live.buffers[i].buffer->pipeline;
        return p && p->kind == PipelineBuffer::Kind::Versions && p->versions > 1 ? &*p : nullptr;
    };

    // Inferred stages live at the peak: one fewer, and lower again (nothing reported).
    for (size_t i : peak.buffers)
        if (const auto* p = pipelined(i); p && p->inferredLoop >= 0 && p->stages > 1 &&
                                          std::find(stages.fewer.begin(), stages.fewer.end(), p->inferredLoop) ==
                                              stages.fewer.end()) {
            stages.fewer.push_back(p->inferredLoop);
            stages.refusedBytes[p->inferredLoop] = total;
        }
    if (!stages.fewer.empty()) return;

    // The author's `stages` live at the peak: the loop is what to change, and the message says
    // how many stages the same plan fits.
    const PipelineBuffer* loop = nullptr;
    for (size_t i : peak.buffers)
        if (const auto* p = pipelined(i); p && (!loop || p->loop < loop->loop)) loop = p;
    if (loop) {
        int64_t perStage = 0;
        std::string held;
        for (size_t i = 0; i < live.buffers.size(); ++i)
            if (const auto* p = pipelined(i); p && p->loop == loop->loop) {
                int64_t one = bytes[i] / p->versions;
                perStage += one;
                held += fmt::format("{}{} {}", held.empty() ? "" : ", ", live.buffers[i].buffer->name, one);
            }
        // How many stages fit: the same plan with fewer versions, of the buffers live with the
        // loop's (those elsewhere, an epilogue's staging tile taken only where bytes are free,
        // are another matter, reported when they do not fit on their own).
        auto withLoop = [&](size_t i) {
            for (size_t j = 0; j < live.buffers.size(); ++j)
                if (const auto* p = pipelined(j); p && p->loop == loop->loop && live.buffers[i].overlaps(live.buffers[j]))
                    return true;
            return false;
        };
        int fit = 0;
        int64_t oneStage = 0;
        for (int k = loop->stages - 1; k >= 1 && fit == 0; --k) {
            std::vector<int64_t> fewer = bytes;
            for (size_t i = 0; i < live.buffers.size(); ++i) {
                const auto* p = pipelined(i);
                if (p && p->loop == loop->loop) fewer[i] = bytes[i] / p->versions * std::max(1, p->versions - (loop->stages - k));
                else if (!withLoop(i)) fewer[i] = 0;
            }
            int64_t t = placeBuffers(live.buffers, fewer, aligns, true).total;
            if (k == 1) oneStage = t;
            if (t <= limit) fit = k;
        }
        int64_t rest = std::max<int64_t>(0, total - int64_t(loop->stages) * perStage);
        std::string advice =
            fit > 0 ? fmt::format("at most {} stage{} fit{}", fit, fit == 1 ? "" : "s", fit == 1 ? "s" : "")
                    : fmt::format("even without pipelining the loop's buffers need {} bytes: use smaller tiles", oneStage);
        std::string need = rest > 0 ? fmt::format("{} stages and the other shared buffers live with them ({} bytes, "
                                                  "the compiler's scratch buffers included)",
                                                  loop->stages, rest)
                                    : fmt::format("{} stages", loop->stages);
        ctx.diags.report(DiagId::err_pipeline_stages_shared_memory, SourceRange(loop->loop), loop->stages,
                         ctx.target.name,
                         fmt::format("each stage holds {} ({} bytes), so {} need {} bytes, but the target offers {} "
                                     "bytes per block ({})",
                                     held, perStage, need, total, limit, advice));
    } else {
        std::string largest = peak.buffers.empty() ? std::string("") : live.buffers[peak.buffers[0]].buffer->name;
        ctx.diags.report(DiagId::err_shared_memory_total, SourceRange(peak.loc.valid() ? peak.loc : kernel.loc), total,
                         ctx.target.name, limit,
                         fmt::format("make the buffers live here smaller (smaller tiles, a narrower dtype; the largest "
                                     "is '{}'), or end a buffer's last use before another's first so that they share "
                                     "bytes",
                                     largest));
    }

    // What is live at the peak, largest first.
    std::map<std::string, SourceLoc> declared = allocationLocs(out);
    std::set<std::string> scratch;
    for (const auto& b : ctx.scratchBuffers()) scratch.insert(b->name);
    for (size_t i : peak.buffers) {
        const SharedLife& l = live.buffers[i];
        const std::string& name = l.buffer->name;
        std::string what = fmt::format("{} bytes", bytes[i]);
        if (const auto* p = pipelined(i))
            what = fmt::format("{} bytes ({} versions of {} for the pipelined loop at {})", bytes[i], p->versions,
                               bytes[i] / p->versions, lineOf(p->loop));
        if (l.buffer->isMbarrierArray() || scratch.count(name) || !declared.count(name)) {
            std::string role = l.buffer->isMbarrierArray() ? "the pipeline's barriers" : "the compiler's scratch buffer";
            ctx.diags.note(SourceRange(l.useLoc.valid() ? l.useLoc : peak.loc),
                           fmt::format("{} '{}', live at the peak, takes {} (first used here)", role, name, what));
        } else {
            ctx.diags.note(SourceRange(declared[name]), fmt::format("'{}', live at the peak, takes {}", name, what));
        }
    }
}

} // namespace

Stmt planSharedMemory(Kernel& kernel, const Stmt& body, LowerContext& ctx, StageInference& stages) {
    Stmt out = body;
    for (auto it = ctx.scratchBuffers().rbegin(); it != ctx.scratchBuffers().rend(); ++it) out = allocate(*it, out, kernel.loc);

    SharedLiveness live = sharedLiveness(out, ctx.transientScratch());
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
        live = sharedLiveness(out, ctx.transientScratch());  // the same ranges, renumbered
    }

    kernel.sharedBytes = placed.total;
    kernel.sharedPlan.clear();
    for (size_t i = 0; i < live.buffers.size(); ++i) {
        const SharedLife& l = live.buffers[i];
        kernel.sharedPlan.push_back({l.buffer, placed.offsets[i], bytes[i], aligns[i], l.first, l.last, l.firstLoc, l.lastLoc});
    }
    if (placed.total > ctx.target.sharedMemPerBlock) reportOverflow(kernel, out, live, bytes, aligns, placed.total, ctx, stages);
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

#include "passes/SharedLiveness.h"

#include "ir/Accesses.h"
#include "ir/TileOp.h"
#include "ir/Visitor.h"

#include <algorithm>
#include <climits>

namespace tlc {

using namespace ir;

namespace {

// The shared buffers an expression uses (through loads, vector loads and the addresses that
// cp.async, ldmatrix and the like take).
class SharedUseFinder : public AccessVisitor {
public:
    std::vector<const BufferNode*> found;

protected:
    void onAccess(const Access& a) override {
        if (a.buffer->scope == MemScope::Shared) found.push_back(a.buffer.get());
    }
};

class Walker {
public:
    SharedLiveness out;

    void walk(const Stmt& s) {
        if (!s) return;
        int me = next_++;
        // Compiler-made statements have no line: they belong to the last one named before them
        // (an op's lowering starts with a comment that has the op's line).
        if (s->loc.valid()) loc_ = s->loc;
        locs_.push_back(loc_);
        switch (s->kind) {
        case NodeKind::Seq:
            for (const auto& c : s.as<Seq>()->stmts) walk(c);
            break;
        case NodeKind::LetStmt:
            reads(s.as<LetStmt>()->value, me);
            walk(s.as<LetStmt>()->body);
            break;
        case NodeKind::Evaluate: reads(s.as<Evaluate>()->value, me); break;
        case NodeKind::Store: {
            const auto* st = s.as<Store>();
            use(st->buffer.get(), me);
            for (const auto& i : st->indices) reads(i, me);
            reads(st->value, me);
            break;
        }
        case NodeKind::For: {
            const auto* f = s.as<For>();
            reads(f->min, me);
            reads(f->extent, me);
            reads(f->step, me);
            bool outermost = loop_ < 0;
            if (outermost) loop_ = me;
            region(f->body);
            if (outermost) {
                loopEnd_[me] = next_ - 1;
                loop_ = -1;
            }
            break;
        }
        case NodeKind::While: {
            // A buffer used anywhere in the loop (its condition included) is live through all of it.
            const auto* w = s.as<While>();
            bool outermost = loop_ < 0;
            if (outermost) loop_ = me;
            reads(w->cond, me);
            region(w->body);
            if (outermost) {
                loopEnd_[me] = next_ - 1;
                loop_ = -1;
            }
            break;
        }
        case NodeKind::IfThenElse: {
            const auto* i = s.as<IfThenElse>();
            reads(i->cond, me);
            region(i->thenCase);
            region(i->elseCase);
            break;
        }
        case NodeKind::Allocate: {
            const auto* a = s.as<Allocate>();
            if (a->buffer->scope == MemScope::Shared) allocated(a->buffer);
            reads(a->init, me);
            walk(a->body);
            break;
        }
        case NodeKind::Barrier: out.barriers.push_back({me, regionFirst_, regionLast_}); break;
        case NodeKind::TileOpStmt: {
            const auto& op = *s.as<TileOpStmt>()->op;
            out.tileOps[s.get()].push_back(me);
            for (const auto& regions : {op.reads(), op.writes()})
                for (const Region* r : regions) {
                    if (r->buffer->scope == MemScope::Shared) use(r->buffer.get(), me);
                    for (const auto& e : r->starts) reads(e, me);
                }
            break;
        }
        case NodeKind::Comment: break;
        default: break;
        }
    }

    const std::set<std::string>* transient = nullptr;  // names live only at their uses

    void finish() {
        out.size = next_;
        out.locs = locs_;
        std::vector<SharedLife> lives;
        for (const Buffer& b : allocations_) {
            auto it = uses_.find(b.get());
            if (it == uses_.end()) continue;  // never used: takes no bytes
            SharedLife life{b, INT_MAX, -1, {}, {}, {}};
            int firstUse = INT_MAX;
            const bool atUses = transient && transient->count(b->name);
            for (auto [pos, loop] : it->second) {
                firstUse = std::min(firstUse, pos);
                if (atUses) loop = -1;
                int first = loop >= 0 ? loop : pos, last = loop >= 0 ? loopEnd_.at(loop) : pos;
                life.first = std::min(life.first, first);
                life.last = std::max(life.last, last);
            }
            life.firstLoc = locs_[life.first];
            life.lastLoc = locs_[loopStartOf(life.last)];
            life.useLoc = locs_[firstUse];
            lives.push_back(life);
        }
        out.buffers = std::move(lives);
    }

private:
    int next_ = 0;
    int loop_ = -1;  // the outermost loop being walked
    int regionFirst_ = 0, regionLast_ = INT_MAX;
    std::map<int, int> loopEnd_;
    std::vector<SourceLoc> locs_;
    SourceLoc loc_;

    // A position at the end of an outermost loop stands for the loop.
    int loopStartOf(int pos) const {
        for (auto [start, end] : loopEnd_)
            if (end == pos) return start;
        return pos;
    }
    std::vector<Buffer> allocations_;
    std::map<const BufferNode*, std::vector<std::pair<int, int>>> uses_;  // allocation -> (position, loop)
    std::map<const BufferNode*, const BufferNode*> canonical_;

    void allocated(const Buffer& b) {
        for (const auto& a : allocations_)
            if (a.get() == b.get()) return;
        allocations_.push_back(b);
        canonical_[b.get()] = b.get();
    }

    // A loop body or if branch: barriers inside it are reached only by the threads that run it.
    void region(const Stmt& s) {
        if (!s) return;
        int first = regionFirst_, last = regionLast_;
        regionFirst_ = next_;
        regionLast_ = next_ + statementCount(s) - 1;
        walk(s);
        regionFirst_ = first;
        regionLast_ = last;
    }

    void use(const BufferNode* b, int pos) {
        // A view (another node with an allocation's name, scope and type) uses its storage.
        auto it = canonical_.find(b);
        if (it == canonical_.end()) {
            const BufferNode* found = nullptr;
            for (const auto& a : allocations_)
                if (a->name == b->name && a->dtype == b->dtype) found = a.get();
            if (!found) return;
            it = canonical_.emplace(b, found).first;
        }
        uses_[it->second].emplace_back(pos, loop_);
    }

    void reads(const Expr& e, int pos) {
        if (!e) return;
        SharedUseFinder f;
        f.visit(e);
        for (const BufferNode* b : f.found) use(b, pos);
    }
};

class Counter : public IRVisitor {
public:
    int count = 0;

protected:
#define STMT_NODE(N)                  \
    void visit##N(const N* n) override { \
        ++count;                      \
        IRVisitor::visit##N(n);       \
    }
#include "ir/IRNodes.def"
    // Expressions hold no statements.
    void visitLoad(const Load*) override {}
    void visitCall(const Call*) override {}
    void visitBinary(const Binary*) override {}
    void visitSelect(const Select*) override {}
    void visitCast(const Cast*) override {}
    void visitUnary(const Unary*) override {}
};

} // namespace

int statementCount(const Stmt& s) {
    if (!s) return 0;
    Counter c;
    c.visit(s);
    return c.count;
}

bool SharedLiveness::barrierBetween(int a, int b) const {
    for (const auto& site : barriers)
        if (a < site.position && site.position < b && site.regionFirst <= a && b <= site.regionLast) return true;
    return false;
}

Placement placeBuffers(const std::vector<SharedLife>& buffers, const std::vector<int64_t>& bytes,
                       const std::vector<int64_t>& aligns, bool reuse) {
    size_t n = buffers.size();
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
    Placement p;
    p.offsets.assign(n, -1);
    auto alignUp = [](int64_t x, int64_t a) { return (x + a - 1) / a * a; };
    for (size_t i : order) {
        // Candidates: 0 and the end of every placed buffer it must not meet.
        std::vector<size_t> blockers;
        for (size_t j = 0; j < n; ++j)
            if (p.offsets[j] >= 0 && (!reuse || buffers[i].overlaps(buffers[j]))) blockers.push_back(j);
        std::vector<int64_t> candidates{0};
        for (size_t j : blockers) candidates.push_back(p.offsets[j] + bytes[j]);
        int64_t best = -1;
        for (int64_t c : candidates) {
            int64_t at = alignUp(c, aligns[i]);
            bool free = true;
            for (size_t j : blockers) free = free && (at + bytes[i] <= p.offsets[j] || p.offsets[j] + bytes[j] <= at);
            if (free && (best < 0 || at < best)) best = at;
        }
        p.offsets[i] = best;
        p.total = std::max(p.total, best + bytes[i]);
    }
    return p;
}

int64_t sharedBufferBytes(const Buffer& b) {
    int64_t n = 1;
    for (const auto& e : b->shape) n *= asConstInt(e) ? *asConstInt(e) : 0;
    return (n * dtypeBits(b->dtype) + 7) / 8;
}

int64_t sharedAlignment(const Buffer& b, const LowerContext& ctx) {
    int64_t align = std::max<int64_t>({16, dtypeBytes(b->dtype), b->alignBytes});
    if (auto it = ctx.sharedLayouts.find(b.get()); it != ctx.sharedLayouts.end())
        align = std::max(align, it->second.swizzle.baseAlignment());
    // A TMA destination: its box's swizzle atom (or 128 bytes unswizzled), ops/copy/CopyTma.
    if (auto it = ctx.sharedAlignment.find(b.get()); it != ctx.sharedAlignment.end())
        align = std::max<int64_t>(align, it->second);
    return align;
}

std::map<const StmtNode*, int64_t> sharedHeadroom(const Stmt& body, const LowerContext& ctx) {
    SharedLiveness live = sharedLiveness(body);
    std::vector<int64_t> bytes, aligns;
    for (const auto& l : live.buffers) {
        bytes.push_back(sharedBufferBytes(l.buffer));
        aligns.push_back(sharedAlignment(l.buffer, ctx));
    }
    int64_t peak = placeBuffers(live.buffers, bytes, aligns, true).total;
    // A persistent kernel's tiles stay live across its loop over tiles (the producer may be
    // loading the next tile's while an op runs): an op's scratch may raise the pool, up to what
    // a block may have (docs/lowering.md, "Persistent kernels").
    const int64_t raise = ctx.persistentTile ? std::max<int64_t>(0, ctx.target.sharedMemPerBlock - peak) : 0;
    std::map<const StmtNode*, int64_t> out;
    for (const auto& [node, positions] : live.tileOps) {
        int64_t least = peak;
        for (int pos : positions) {
            int64_t used = 0;
            for (size_t i = 0; i < live.buffers.size(); ++i)
                if (live.buffers[i].first <= pos && pos <= live.buffers[i].last) used += (bytes[i] + 15) / 16 * 16;
            least = std::min(least, std::max<int64_t>(0, peak - used));
        }
        out[node] = least + raise;
    }
    return out;
}

SharedPeak sharedPeak(const SharedLiveness& live, const std::vector<int64_t>& bytes) {
    SharedPeak peak;
    // The sum of live bytes changes only where a buffer's range starts.
    for (const auto& candidate : live.buffers) {
        int pos = candidate.first;
        int64_t sum = 0;
        for (size_t i = 0; i < live.buffers.size(); ++i)
            if (live.buffers[i].first <= pos && pos <= live.buffers[i].last) sum += bytes[i];
        if (sum > peak.bytes || (sum == peak.bytes && peak.position >= 0 && pos < peak.position)) {
            peak.bytes = sum;
            peak.position = pos;
        }
    }
    if (peak.position < 0) return peak;
    if (size_t(peak.position) < live.locs.size()) peak.loc = live.locs[size_t(peak.position)];
    for (size_t i = 0; i < live.buffers.size(); ++i)
        if (live.buffers[i].first <= peak.position && peak.position <= live.buffers[i].last) peak.buffers.push_back(i);
    std::stable_sort(peak.buffers.begin(), peak.buffers.end(), [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
    return peak;
}

int64_t plannedSharedBytes(const Stmt& body, const std::map<const BufferNode*, int>& versions, bool reuse) {
    SharedLiveness live = sharedLiveness(body);
    std::vector<int64_t> bytes, aligns;
    for (const auto& l : live.buffers) {
        auto it = versions.find(l.buffer.get());
        bytes.push_back(sharedBufferBytes(l.buffer) * (it == versions.end() ? 1 : it->second));
        aligns.push_back(std::max<int64_t>({16, dtypeBytes(l.buffer->dtype), l.buffer->alignBytes}));
    }
    return placeBuffers(live.buffers, bytes, aligns, reuse).total;
}

SharedLiveness sharedLiveness(const Stmt& body, const std::set<std::string>& transient) {
    Walker w;
    w.transient = &transient;
    w.walk(body);
    w.finish();
    return w.out;
}

} // namespace tlc

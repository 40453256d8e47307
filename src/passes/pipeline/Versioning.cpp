// Buffer versioning: a shared buffer that a pipelined loop uses at more than one stage gets one
// version per iteration in flight (a leading dimension indexed by iteration % versions), so that
// a step's producers fill a version the later stages of earlier iterations no longer read.
#include "passes/pipeline/LoopPlan.h"

#include "ir/Simplify.h"
#include "ops/gemm/Gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace tlc::pipeline {

using namespace ir;

namespace {

// Rewrites one instance of a statement: versioned buffers get their version as leading index,
// and the async producer's fill (copy, im2col) is issued asynchronously.
class Versioner : public IRMutator {
public:
    struct Version {
        Buffer buffer;  // the versioned buffer
        Expr slot;      // which version this instance touches
    };
    std::map<const BufferNode*, Version> map;
    bool asyncFill = false;

protected:
    Expr mutateLoad(const Load* n, const Expr& self) override {
        auto it = map.find(n->buffer.get());
        if (it == map.end()) return IRMutator::mutateLoad(n, self);
        return load(it->second.buffer, versionedIndices(it->second, n->indices), n->lanes);
    }
    Stmt mutateStore(const Store* n, const Stmt& self) override {
        auto it = map.find(n->buffer.get());
        if (it == map.end()) return IRMutator::mutateStore(n, self);
        std::vector<Expr> idx = versionedIndices(it->second, n->indices);
        return store(it->second.buffer, idx, mutate(n->value), n->loc, n->storeKind);
    }
    Stmt mutateTileOpStmt(const TileOpStmt* n, const Stmt& self) override {
        Stmt s = IRMutator::mutateTileOpStmt(n, self);
        TileOpPtr op = s.as<TileOpStmt>()->op;
        bool touches = false;
        for (const Region* r : op->reads()) touches |= map.count(r->buffer.get()) > 0;
        for (const Region* r : op->writes()) touches |= map.count(r->buffer.get()) > 0;
        if (!touches) return s;
        op = op->mapRegions([&](const Region& r) {
            auto it = map.find(r.buffer.get());
            if (it == map.end()) return r;
            Region v;
            v.buffer = it->second.buffer;
            v.starts.push_back(it->second.slot);
            v.extents.push_back(1);
            v.starts.insert(v.starts.end(), r.starts.begin(), r.starts.end());
            v.extents.insert(v.extents.end(), r.extents.begin(), r.extents.end());
            return v;
        });
        if (!op) throw std::logic_error("pipeline: a tile op that cannot take versioned buffers");
        if (asyncFill)
            if (TileOpPtr issued = ops::asOp(*op).withAsyncIssue()) op = issued;
        return tileOp(op, n->loc);
    }

private:
    // An access's indices into the versioned buffer: the version first.
    std::vector<Expr> versionedIndices(const Version& v, const std::vector<Expr>& indices) {
        bool changed = false;
        std::vector<Expr> idx{v.slot};
        for (const auto& i : mutateAll(indices, changed)) idx.push_back(i);
        return idx;
    }
};

// annotate_layout names a buffer before the loop that versions it: point it at the versioned
// buffer, whose tiles (its last two dimensions) the layout then applies to.
class AnnotationRetargeter : public IRMutator {
public:
    explicit AnnotationRetargeter(const std::map<const BufferNode*, Buffer>& versioned) : versioned_(versioned) {}

protected:
    Stmt mutateTileOpStmt(const TileOpStmt* n, const Stmt& self) override {
        const auto* a = dynamic_cast<const ops::AnnotateLayoutOp*>(n->op.get());
        auto it = a ? versioned_.find(a->buffer().get()) : versioned_.end();
        if (it == versioned_.end()) return self;
        return tileOp(std::make_shared<ops::AnnotateLayoutOp>(wholeBuffer(it->second), a->layout()), n->loc);
    }

private:
    const std::map<const BufferNode*, Buffer>& versioned_;
};

// The shared buffers the loop uses, in order of first use (then name).
std::vector<const BufferNode*> sharedInOrderOfUse(const std::vector<Item>& items) {
    const size_t m = items.size();
    std::vector<const BufferNode*> shared;
    for (const auto& it : items)
        for (const auto* set : {&it.fp.reads, &it.fp.writes})
            for (const auto* b : *set)
                if (b->scope == MemScope::Shared && std::find(shared.begin(), shared.end(), b) == shared.end())
                    shared.push_back(b);
    std::stable_sort(shared.begin(), shared.end(), [&](const BufferNode* a, const BufferNode* b) {
        auto first = [&](const BufferNode* x) {
            for (size_t i = 0; i < m; ++i)
                if (items[i].fp.touches(x)) return i;
            return m;
        };
        return std::make_pair(first(a), a->name) < std::make_pair(first(b), b->name);
    });
    return shared;
}

} // namespace

// Registers and global memory get no versions: a fragment, local or global buffer that the loop
// writes and uses at two stages would be overwritten by the next iteration's earlier stage
// before this one's later stage reads it. Such a loop runs in order (false, logged unless the
// loop is only checked).
bool checkUnversionedBuffers(const LoopPlan& plan, bool checkOnly, LowerContext& ctx) {
    for (const auto& it : plan.items)
        for (const auto* b : it.fp.writes) {
            if (b->scope == MemScope::Shared || plan.overlap.carried.count(b)) continue;
            std::set<int> at;
            for (const auto& other : plan.items)
                if (other.fp.touches(b)) at.insert(other.stage);
            if (at.size() < 2) continue;
            if (!checkOnly)
                ctx.decide(loopSubject(plan.loop), "not pipelined", "lowering",
                           fmt::format("'{}' ({} memory) is written in the loop and used at stages {} and {}: only "
                                       "shared buffers get a version per stage, so the loop runs its iterations "
                                       "in order",
                                       b->name, scopeName(b->scope), *at.begin(), *at.rbegin()),
                           plan.loop->loc);
            return false;
        }
    return true;
}

// Shared buffers used at more than one stage get versions; their one writer must be a fill
// (copy, im2col) that can be a producer, read at its own stage or later. False after reporting a wrong
// schedule, or logging why the loop runs in order.
bool planVersions(LoopPlan& plan, const PipelinedKernel& kernel, bool checkOnly, LowerContext& ctx) {
    const For* n = plan.loop;
    const std::vector<Item>& items = plan.items;
    const size_t m = items.size();
    plan.shared = sharedInOrderOfUse(items);
    for (const auto* b : plan.shared) {
        std::set<int> stages;
        for (const auto& it : items)
            if (it.fp.touches(b)) stages.insert(it.stage);
        if (stages.size() < 2) continue;
        std::string why;
        bool wrongSchedule = false;
        size_t writer = m;
        for (size_t i = 0; i < m && why.empty(); ++i)
            if (items[i].fp.writes.count(b)) {
                writer = i;
                why = producerIssue(plan, i, kernel.accesses, &wrongSchedule);
            }
        if (writer == m) continue;  // only read: every stage sees the same data
        int versions = 1;
        bool async = true;
        for (size_t j = 0; j < m && why.empty(); ++j) {
            if (j == writer || !items[j].fp.reads.count(b)) continue;
            int d = items[j].stage - items[writer].stage;
            if (d < 0 || (d == 0 && items[j].pos < items[writer].pos)) {
                why = fmt::format("statement {} reads '{}' before statement {} fills it", j, b->name, writer);
                wrongSchedule = true;
            }
            versions = std::max(versions, d + 1);
            async &= d > 0;
        }
        if (!why.empty()) {
            std::string text = fmt::format("'{}' is used at stages {} and {}, but {}", b->name, *stages.begin(),
                                           *stages.rbegin(), why);
            // A statement reading a tile before its stage fills it, or two writers, make the
            // schedule itself wrong; anything else only keeps this compiler from giving the
            // tile versions, and the loop runs unpipelined (as on targets without cp.async).
            if (wrongSchedule) ctx.diags.report(DiagId::err_pipeline_schedule, SourceRange(n->loc), text);
            else if (!checkOnly)
                ctx.decide(loopSubject(n), "not pipelined", "lowering",
                           text + ", which the pipeline cannot give versions: the loop runs its iterations in order",
                           n->loc);
            return false;
        }
        plan.versions[b] = {writer, versions, async};
    }
    return true;
}

// Versioned buffers: a leading dimension, one entry per iteration in flight.
void versionBuffers(LoopPlan& plan) {
    for (const auto& [b, v] : plan.versions) {
        Buffer old = producerTile(plan.items[v.writer]).buffer;
        std::vector<Expr> shape{intImm(v.count)};
        shape.insert(shape.end(), old->shape.begin(), old->shape.end());
        auto node = std::make_shared<BufferNode>(*makeBuffer(old->name, old->dtype, old->scope, shape));
        node->pipeline = PipelineBuffer{PipelineBuffer::Kind::Versions, false, v.count, plan.last + 1, plan.loop->loc,
                                        plan.inferred};
        plan.versionedBuffers[b] = node;
        plan.items[v.writer].async = v.async;
    }
}

// Statement i for iteration `iter`: its versions indexed, its producer issued async (or a TMA
// load, `elected`: issued by the thread the caller chose), its gemm's group left in flight (as
// `part` of a group several k-tiles share), its gemm a turn of the ping-pong schedule.
Stmt instance(const LoopPlan& plan, size_t i, const Expr& iter, bool elected, ops::GemmOp::GroupPart part) {
    const Item& item = plan.items[i];
    Stmt s = substitute(item.stmt, {{plan.loop->var, iter}});
    Versioner v;
    v.asyncFill = item.async;
    // Versions (and the TMA barrier) by the iteration counted from the block's first tile.
    const Expr counted = carried(plan, iter);
    for (const auto& [b, ver] : plan.versions)
        if (item.fp.touches(b)) v.map[b] = {plan.versionedBuffers.at(b), simplify(counted % int64_t(ver.count))};
    s = simplify(v.map.empty() ? s : v.mutate(s));
    if (item.tma) {
        const auto* t = s.as<TileOpStmt>();
        const auto* c = static_cast<const ops::CopyOp*>(t->op.get());
        Region bar{plan.tma.full, {simplify(counted % plan.tma.versions)}, {1}};
        s = tileOp(c->withTma(bar, elected, plan.tma.multicast.count(i) ? plan.tma.cluster : 1), t->loc);
    }
    if (i == plan.inFlight) {
        const auto* t = s.as<TileOpStmt>();
        const auto* gemm = static_cast<const ops::GemmOp*>(t->op.get());
        s = tileOp(part == ops::GemmOp::GroupPart::Whole ? gemm->withGroupInFlight() : gemm->withGroupPart(part),
                   t->loc);
    }
    if (plan.pingPong.gemms.count(i)) {
        const auto* t = s.as<TileOpStmt>();
        s = tileOp(static_cast<const ops::GemmOp*>(t->op.get())
                           ->withTurn(plan.pingPong.warpgroups, plan.pingPong.firstBarrier),
                   t->loc);
    }
    return s;
}

const ops::GemmOp* gemmOf(const Item& item) {
    const auto* t = item.stmt.as<TileOpStmt>();
    return t ? dynamic_cast<const ops::GemmOp*>(t->op.get()) : nullptr;
}

// "A_s x3 (TMA), B_s x3 (TMA)": the versioned buffers in order of first use, for comments.
std::string versionList(const LoopPlan& plan) {
    std::string names;
    for (const auto* b : plan.shared)
        if (auto v = plan.versions.find(b); v != plan.versions.end())
            names += fmt::format("{}{} x{}{}", names.empty() ? "" : ", ", plan.versionedBuffers.at(b)->name,
                                 v->second.count, plan.items[v->second.writer].tma ? " (TMA)" : "");
    return names;
}

Stmt retargetAnnotations(const Stmt& body, const std::map<const BufferNode*, Buffer>& versioned) {
    return versioned.empty() ? body : AnnotationRetargeter(versioned).mutate(body);
}

} // namespace tlc::pipeline

// TMA and the mbarrier protocol (docs/lowering.md, "TMA copies and the mbarrier pipeline"). On
// targets with TMA, producers that qualify (ops/copy/CopyTma.cpp) become TMA loads ordered by
// mbarriers: per version a `full` barrier (thread 0 announces the boxes' bytes, TMA completes
// them; consumers wait on it) and an `empty` one (every thread arrives after its last read of
// the version; thread 0 waits on it before loading the version again). Those buffers need no
// cp.async group, wait or block barrier; copies that do not qualify stay cp.async, with the
// reason recorded.
#include "passes/pipeline/LoopPlan.h"

#include "ir/Simplify.h"
#include "ops/gemm/Gemm.h"

#include <fmt/format.h>

namespace tlc::pipeline {

using namespace ir;

namespace {

Expr addressOf(const Buffer& b, const Expr& index) { return call("address_of", DType::I64, {load(b, {index})}); }
Stmt mbarrierCall(const char* name, std::vector<Expr> args, SourceLoc loc) {
    return evaluate(call(name, DType::I32, std::move(args)), loc);
}

} // namespace

std::map<const BufferNode*, layout::SharedLayoutName> annotatedLayouts(const Stmt& body) {
    class Finder : public IRVisitor {
    public:
        std::map<const BufferNode*, layout::SharedLayoutName> found;

    protected:
        void visitTileOpStmt(const TileOpStmt* n) override {
            if (const auto* a = dynamic_cast<const ops::AnnotateLayoutOp*>(n->op.get()))
                found[a->buffer().get()] = a->layout();
        }
    } f;
    f.visit(body);
    return f.found;
}

// Which async producers become TMA loads (plan.tma, items' `tma` and `tmaReader`), each copy's
// transport logged with the reason when it stays cp.async.
void chooseTma(LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx) {
    std::vector<Item>& items = plan.items;
    const Versions& vers = plan.versions;
    TmaPlan& tma = plan.tma;
    if (!ctx.target.has(Feature::Tma)) return;
    std::vector<std::pair<size_t, const BufferNode*>> candidates;
    std::vector<std::pair<const BufferNode*, std::string>> why;
    std::set<int> readerStages;
    for (const BufferNode* b : plan.shared) {
        if (!vers.count(b)) continue;
        const auto& v = vers.at(b);
        if (!items[v.writer].async) continue;
        const ops::CopyOp* copy = copyOf(items[v.writer]);
        auto ann = kernel.annotated.find(b);
        // A gather (im2col) is no box: TMA's tiled mode cannot move it (its im2col mode moves
        // whole pixels of a filter tap, not this compiler's [pixels, taps x channels] tiles).
        why.push_back({b, !copy ? "'" + fillOf(items[v.writer])->name() + "' gathers its tile: it is not a box"
                                : ops::tmaIssue(*copy, ctx, ann == kernel.annotated.end() ? std::nullopt
                                                                                         : std::optional(ann->second))});
        if (!why.back().second.empty()) continue;
        candidates.push_back({v.writer, b});
        for (size_t j = 0; j < items.size(); ++j)
            if (j != v.writer && items[j].fp.reads.count(b)) readerStages.insert(items[j].stage);
    }
    // One pair of barriers per version serves every TMA producer of the loop: they must
    // share their stage and versions, and their readers one stage (the default schedule).
    // With the gemm overlap the second gemm reads its tiles a stage after the first: the
    // protocol waits on `full` before the first and releases after the second's wait.
    bool uniform = readerStages.size() <= 1 ||
                   (plan.overlap.used() && readerStages.size() == 2 &&
                    *readerStages.begin() == items[plan.overlap.first].stage &&
                    *readerStages.rbegin() == items[plan.overlap.second].stage);
    for (const auto& [writer, b] : candidates)
        uniform &= vers.at(b).count == vers.at(candidates.front().second).count &&
                   items[writer].stage == items[candidates.front().first].stage;
    for (auto& [b, reason] : why) {
        if (reason.empty() && !uniform)
            reason = "the loop's TMA copies or their readers run at different stages (one barrier pair per "
                     "version serves them all)";
        const std::string copy = fillOf(items[vers.at(b).writer])->str();
        ctx.copyDecisions.push_back({copy, reason.empty() ? "tma" : "cp.async", reason});
        ctx.decide(fmt::format("transport of {}", copy), reason.empty() ? "TMA load" : "cp.async", "lowering",
                   reason.empty() ? "a pipelined global-to-shared copy of a box TMA can move: one thread "
                                    "issues it, the stage's mbarrier counts its bytes"
                                  : "not TMA: " + reason,
                   plan.loop->loc);
        if (!reason.empty()) tma.notes.push_back(fmt::format("{}: cp.async, not TMA: {}", b->name, reason));
    }
    if (!uniform) candidates.clear();
    if (candidates.empty()) return;
    tma.versions = vers.at(candidates.front().second).count;
    for (const auto& [writer, b] : candidates) {
        items[writer].tma = true;
        tma.bytes += ops::tmaBoxBytes(*copyOf(items[writer]));
        for (size_t j = 0; j < items.size(); ++j)
            if (j != writer && items[j].fp.reads.count(b)) items[j].tmaReader = true;
    }
}

// The barrier arrays, one barrier of each per version, and the tiles TMA fills, all ordered by
// the mbarriers: the buffers say so (BufferNode::pipeline), and insert-barriers leaves them alone.
void makeTmaBuffers(LoopPlan& plan, LowerContext& ctx) {
    TmaPlan& tma = plan.tma;
    if (!tma.used()) return;
    std::optional<PipelineBuffer> barriers;
    for (auto& [b, v] : plan.versions) {
        if (!plan.items[v.writer].tma) continue;
        auto tile = std::make_shared<BufferNode>(*plan.versionedBuffers.at(b));
        tile->pipeline->mbarrierOrdered = true;
        plan.versionedBuffers[b] = tile;
        if (!barriers) barriers = tile->pipeline;
    }
    barriers->kind = PipelineBuffer::Kind::Barriers;
    barriers->versions = int(tma.versions);
    auto barrierArray = [&](const char* base) {
        auto node = std::make_shared<BufferNode>(
            *makeBuffer(ctx.freshName(base), DType::U64, MemScope::Shared, {intImm(tma.versions)}));
        node->pipeline = barriers;
        ctx.reserveName(node->name);
        return Buffer(node);
    };
    tma.full = barrierArray("full_bar");
    tma.empty = barrierArray("empty_bar");
}

// Thread 0 initialises the barriers (full: its one arrival with the bytes; empty: every
// thread's) and makes them visible to TMA; the block barrier publishes them. Inside another
// loop a barrier first: threads of the last run may still arrive on them.
Stmt initBarriers(const LoopPlan& plan, LowerContext& ctx, bool beforeSplit) {
    const TmaPlan& tma = plan.tma;
    const SourceLoc loc = plan.loop->loc;
    VarPtr v = ctx.freshVar("version");
    // In a cluster every consumer thread of every block releases a version on each block's
    // `empty`: a block's producer refills it in all of them.
    Stmt init = seq({mbarrierCall("mbarrier_init", {addressOf(tma.full, Expr(v)), intImm(1)}, loc),
                     mbarrierCall("mbarrier_init", {addressOf(tma.empty, Expr(v)), intImm(ctx.threads * tma.cluster)},
                                  loc)});
    Stmt once = seq({forLoop(v, intImm(0), intImm(tma.versions), ForKind::Serial, init, loc),
                     mbarrierCall("fence_barrier_init", {}, loc)});
    std::vector<Stmt> out;
    if (plan.depth > 0 && !beforeSplit) out.push_back(barrier(loc));
    out.push_back(ifThenElse(binary(BinaryOp::Eq, ctx.tx(), intImm(0)), once, {}, loc));
    // A cluster barrier publishes them to the peers too, before any multicast or remote arrival.
    out.push_back(tma.cluster > 1 ? mbarrierCall("cluster_sync", {}, loc) : barrier(loc));
    return seq(out, loc);
}

// A loop whose phases run on across a persistent kernel's tiles counts its iterations from the
// block's first tile (plan.carry): versions and parities continue where the last tile left them.
Expr MbarrierProtocol::slot(const Expr& iter) const { return simplify(carried(plan_, iter) % plan_.tma.versions); }

Expr MbarrierProtocol::parity(const Expr& iter) const {
    return simplify(binary(BinaryOp::BitAnd, carried(plan_, iter) / plan_.tma.versions, intImm(1)));
}

Stmt MbarrierProtocol::claim(const Expr& iter) const {
    const TmaPlan& tma = plan_.tma;
    const SourceLoc loc = plan_.loop->loc;
    // The version is free once every consumer arrived on empty (phase parity ^ 1 is the
    // previous round; the first round's wait passes at once).
    Expr free = simplify(binary(BinaryOp::BitXor, parity(iter), intImm(1)));
    Stmt expect = mbarrierCall("mbarrier_arrive_expect_tx", {addressOf(tma.full, slot(iter)), intImm(tma.bytes)}, loc);
    // The prologue's iterations are all of round 0: no wait (a spin loop in thread 0's
    // branch there makes ptxas serialise the loop's rs-form wgmmas).
    const int64_t* known = plan_.carry ? nullptr : asConstInt(iter);
    if (known && *known < tma.versions) return expect;
    return seq({mbarrierCall("mbarrier_wait_parity", {addressOf(tma.empty, slot(iter)), free}, loc), expect});
}

Stmt MbarrierProtocol::produce(const Expr& iter) const {
    return ifThenElse(binary(BinaryOp::Eq, ctx_.tx(), intImm(0)), claim(iter), {}, plan_.loop->loc);
}

Stmt MbarrierProtocol::consume(const Expr& iter) const {
    return mbarrierCall("mbarrier_wait_parity", {addressOf(plan_.tma.full, slot(iter)), parity(iter)}, plan_.loop->loc);
}

Stmt MbarrierProtocol::release(const Expr& iter) const {
    const SourceLoc loc = plan_.loop->loc;
    if (plan_.tma.cluster == 1) return mbarrierCall("mbarrier_arrive", {addressOf(plan_.tma.empty, slot(iter))}, loc);
    // In a cluster: on the version's `empty` in every block (this one's included), whose
    // producers all write into this block's version.
    VarPtr cta = ctx_.freshVar("cta");
    return forLoop(cta, intImm(0), intImm(plan_.tma.cluster), ForKind::Unroll,
                   mbarrierCall("mbarrier_arrive_cluster", {addressOf(plan_.tma.empty, slot(iter)), Expr(cta)}, loc),
                   loc);
}

// With a gemm group in flight, iteration iter's wait (wait_group<1>) guarantees only the
// wgmma of iter - 1 done: that stage is the one to release. After the loop the last group is
// drained and the last stage released.
Stmt MbarrierProtocol::releasePrevious(const Expr& iter) const {  // of iteration iter - 1, if any
    const SourceLoc loc = plan_.loop->loc;
    Expr any = simplify(binary(BinaryOp::Le, intImm(1), iter));
    Stmt s = release(simplify(iter - int64_t(1)));
    if (const int64_t* c = asConstInt(any)) return *c ? s : seq({}, loc);
    return ifThenElse(any, s, {}, loc);
}

Stmt MbarrierProtocol::releaseDone(const Expr& iter) const {
    return plan_.inFlight == plan_.items.size() ? release(iter) : releasePrevious(iter);
}

Stmt MbarrierProtocol::drain() const {
    const SourceLoc loc = plan_.loop->loc;
    if (plan_.inFlight == plan_.items.size()) return seq({}, loc);
    const auto* gemm = static_cast<const ops::GemmOp*>(plan_.items[plan_.inFlight].stmt.as<TileOpStmt>()->op.get());
    return seq({tileOp(std::make_shared<ops::WgmmaDrainOp>(gemm->c()), loc), releasePrevious(plan_.loop->extent)}, loc);
}

} // namespace tlc::pipeline

// Warp specialisation (docs/lowering.md, "Warp specialisation"): a producer warpgroup of its own
// issues a loop's TMA loads while the kernel's threads, the consumers, run the rest of the loop.
// Whether a loop suits it, its two loops, and the kernel split between the two warpgroups.
#include "passes/pipeline/Depth.h"
#include "passes/pipeline/LoopPlan.h"

#include "ops/gemm/Gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>

namespace tlc::pipeline {

using namespace ir;

namespace {

// Tile ops that never wait at a block barrier when they are not given shared memory.
bool synchronisationFree(const TileOp& op) {
    static const std::set<std::string> ops = {"copy", "clear", "fill", "atomic_add", "annotate_layout",
                                                "im2col_rows"};
    return ops.count(op.name()) > 0;
}

// A `var`: a scalar of the thread's own (the producer can compute its own copy).
bool isVariable(const BufferNode* b) { return b->scope == MemScope::Local && b->shape.empty(); }

// Why a value that reads `b` cannot be computed again by the producer warpgroup, given the
// global buffers written before the point it is read; empty when it can.
std::string rereadIssue(const BufferNode* b, const BufferSet& writtenBefore) {
    switch (b->scope) {
    case MemScope::Global:
        if (writtenBefore.count(b)) return "'" + b->name + "', which the kernel writes before the loop";
        return "";
    case MemScope::Shared: return "shared memory ('" + b->name + "')";
    case MemScope::Local:
        if (b->shape.empty()) return "'" + b->name + "', a variable only the consumer threads hold (a 'let' would do)";
        [[fallthrough]];
    default: return "'" + b->name + "', which only the consumer threads hold";
    }
}

class LoadedBuffers : public AccessVisitor {
public:
    std::vector<const BufferNode*> buffers;  // in order of appearance

protected:
    void onAccess(const Access& a) override {
        bool load = a.via == Access::Via::Load || a.via == Access::Via::Address;
        if (load && std::find(buffers.begin(), buffers.end(), a.buffer.get()) == buffers.end())
            buffers.push_back(a.buffer.get());
    }
};

// Statement nodes a replayed statement may not hold: calls (side effects, or values only the
// consumers' code computes) and barriers; and reads of the thread index.
class ReplayHazards : public IRVisitor {
public:
    std::string why;

protected:
    void visitEvaluate(const Evaluate*) override { note("calls a function"); }
    void visitBarrier(const Barrier*) override { note("synchronises the block"); }
    void visitVar(const Var* n) override {
        if (n->role == VarRole::ThreadIndex) note("depends on the thread");
    }

private:
    void note(const char* what) {
        if (why.empty()) why = what;
    }
};

// Why the producer cannot run statement s before its loop again, apart from what it reads
// (producerPrelude examines that): empty when it can; `writes` the variables it assigns. It may
// assign only `var`s.
std::string replayIssue(const Stmt& s, std::set<const BufferNode*>& writes) {
    Footprint f = Footprint::of(s);
    if (!f.ops.empty()) return "runs '" + f.ops[0]->name() + "'";
    for (const BufferNode* b : f.writes) {
        if (!isVariable(b)) return "writes '" + b->name + "'";
        writes.insert(b);
    }
    ReplayHazards hazards;
    hazards.visit(s);
    return hazards.why;
}

// What of the code before the loop its warp-specialised producer runs again, in order (see
// PreludeItem): the lets it reads (the trip count, the TMA copies' positions, and what those
// read in turn), the `var`s they read with their declarations and the statements that assign
// them. The producer runs in its own branch, outside the consumers' code that declares them, so
// it declares them again. Pure values (block indices, sizes, parameters, arithmetic on them,
// global memory the kernel does not write before the loop, `var`s computed from those) can be
// computed twice; a value that reads what only the consumers hold (a fragment, shared memory) or
// what may change before the loop (global memory the code before it writes: the producer would
// race with that code) cannot, and then `issue` says so. In a persistent kernel only lets are
// replayed (per tile, Persistent.cpp).
std::vector<PreludeItem> producerPrelude(const LoopPlan& plan, const PipelinedKernel& kernel, std::string* issue) {
    const For* n = plan.loop;
    std::vector<PreludeItem> out;
    auto top = kernel.topLevel.find(n);
    if (top == kernel.topLevel.end()) return out;
    const TopLevelLoop& t = top->second;
    auto setIssue = [&](const std::string& why) {
        if (issue && issue->empty()) *issue = why;
    };
    VarsRead used;
    LoadedBuffers loads;
    std::set<const BufferNode*> variables;  // the vars the producer computes again
    size_t examined = 0;
    // The memory the values read so far load: vars are computed again, the rest read again.
    auto examineLoads = [&](const std::string& reader) {
        for (; examined < loads.buffers.size(); ++examined) {
            const BufferNode* b = loads.buffers[examined];
            if (isVariable(b) && !t.tileLoop) variables.insert(b);
            else if (std::string why = rereadIssue(b, t.writtenBefore); !why.empty()) setIssue(reader + why);
        }
    };
    used.visit(n->extent);
    loads.visit(n->extent);
    for (const auto& it : plan.items)
        if (it.tma) {
            used.visit(it.stmt);
            loads.visit(it.stmt);
        }
    examineLoads("the loop's trip count or its copies' positions read ");
    auto line = [](SourceLoc loc) { return loc.valid() ? fmt::format(" (line {})", loc.line) : std::string(); };
    std::vector<bool> needed(t.prelude.size(), false);
    for (size_t i = t.prelude.size(); i-- > 0;) {
        const PreludeItem& p = t.prelude[i];
        switch (p.kind) {
        case PreludeItem::Kind::Let: {
            const OuterLet& l = t.lets[p.let];
            if (!used.vars.count(l.var.get())) break;
            needed[i] = true;
            used.visit(l.value);
            loads.visit(l.value);
            examineLoads(fmt::format("the producer needs '{}'{}, whose value reads ", l.var->name, line(l.loc)));
            break;
        }
        case PreludeItem::Kind::Stmt: {
            const BufferNode* assigned = nullptr;
            for (const BufferNode* b : p.writes)
                if (variables.count(b)) assigned = b;
            if (!assigned) break;
            needed[i] = true;
            if (!p.issue.empty())
                setIssue(fmt::format("the producer needs '{}', assigned by a statement{} that {}", assigned->name,
                                     line(p.node->loc), p.issue));
            used.visit(p.node);
            loads.visit(p.node);
            examineLoads(fmt::format("the producer needs '{}', assigned by a statement{} that reads ", assigned->name,
                                     line(p.node->loc)));
            variables.insert(p.writes.begin(), p.writes.end());
            break;
        }
        case PreludeItem::Kind::Alloc: needed[i] = variables.count(p.node.as<Allocate>()->buffer.get()) > 0; break;
        }
    }
    for (size_t i = 0; i < t.prelude.size(); ++i)
        if (needed[i]) out.push_back(t.prelude[i]);
    return out;
}

// The lets of the producer's prelude (a persistent kernel's producer replays only those).
std::vector<OuterLet> preludeLets(const std::vector<PreludeItem>& prelude, const TopLevelLoop& top) {
    std::vector<OuterLet> lets;
    for (const PreludeItem& p : prelude)
        if (p.kind == PreludeItem::Kind::Let) lets.push_back(top.lets[p.let]);
    return lets;
}

// `body` inside the replayed prelude.
Stmt replayPrelude(const std::vector<PreludeItem>& prelude, const TopLevelLoop& top, Stmt body) {
    for (auto it = prelude.rbegin(); it != prelude.rend(); ++it) {
        switch (it->kind) {
        case PreludeItem::Kind::Let: {
            const OuterLet& l = top.lets[it->let];
            body = letStmt(l.var, l.value, body, l.loc);
            break;
        }
        case PreludeItem::Kind::Alloc: {
            const auto* a = it->node.as<Allocate>();
            body = allocate(a->buffer, body, a->loc, a->init);
            break;
        }
        case PreludeItem::Kind::Stmt: body = seq({it->node, body}, it->node->loc); break;
        }
    }
    return body;
}

// Why the loop cannot be warp-specialised (empty when it can): the producer warpgroup runs the
// TMA copies on its own, so every producer must be a TMA load, and the producer's positions must
// be values it can compute again.
std::string warpSpecializeIssue(const LoopPlan& plan, const PipelinedKernel& kernel, const LowerContext& ctx) {
    const For* n = plan.loop;
    if (!n->pipeline.order.empty() || !n->pipeline.stage.empty()) return "the loop has 'order'/'stage' lists";
    if (!ctx.target.has(Feature::Setmaxnreg)) return "the target cannot move registers between warpgroups";
    if (kernel.warpSpecialized) return "the kernel has a warp-specialised loop already";
    auto top = kernel.topLevel.find(n);
    if (top == kernel.topLevel.end()) return "it runs inside another loop or a condition";
    if (!plan.tma.used()) return "none of its copies is a TMA load";
    if (ctx.threads % 128 != 0) return fmt::format("its {} threads are not whole warpgroups", ctx.threads);
    if (ctx.threads + 128 > ctx.target.maxThreadsPerBlock)
        return fmt::format("a producer warpgroup would pass the target's {} threads per block",
                           ctx.target.maxThreadsPerBlock);
    // The producer warpgroup issues TMA loads only: a cp.async fill would need the consumers to
    // wait for another warpgroup's cp.async groups, which wait_group cannot.
    // The first such fill in the body's order (versions are keyed by buffer address, which
    // varies from run to run).
    std::optional<size_t> cpAsync;
    for (const auto& [b, v] : plan.versions)
        if (plan.items[v.writer].async && !plan.items[v.writer].tma)
            cpAsync = std::min<size_t>(cpAsync.value_or(v.writer), v.writer);
    if (cpAsync)
        return fmt::format("'{}' of the loop stays cp.async (a producer warpgroup issues TMA loads only)",
                           fillOf(plan.items[*cpAsync])->str());
    std::string issue;
    producerPrelude(plan, kernel, &issue);
    if (issue.empty() && top->second.tileLoop) issue = carryIssue(plan, kernel);
    return issue;
}

// Why the consumers of a warp-specialised loop would synchronise among themselves while the
// producer warpgroup runs (empty: they never do): shared memory besides the TMA tiles, an op
// that synchronises the block, or block barriers before the loop. The producer takes no part in
// block barriers, so those become a named barrier of the consumer threads (consumer-barriers).
std::string consumerSyncReason(const LoopPlan& plan, const PipelinedKernel& kernel) {
    std::set<const BufferNode*> tiles;
    for (const auto& [b, v] : plan.versions)
        if (plan.items[v.writer].tma) tiles.insert(b);
    for (const auto& it : plan.items) {
        if (it.tma) continue;
        for (const auto* set : {&it.fp.reads, &it.fp.writes})
            for (const BufferNode* b : *set)
                if (b->scope == MemScope::Shared && !tiles.count(b))
                    return "a statement of the loop uses shared memory ('" + b->name + "') besides the TMA tiles";
        for (const TileOp* op : it.fp.ops) {
            const auto* gemm = dynamic_cast<const ops::GemmOp*>(op);
            if (gemm && (!tiles.count(gemm->a().buffer.get()) || !tiles.count(gemm->b().buffer.get())))
                return "a gemm of the loop has an operand outside the TMA tiles (it may stage it)";
            if (!gemm && !synchronisationFree(*op)) return "'" + op->name() + "' in the loop synchronises the block";
        }
    }
    // A persistent kernel's consumers meet at their named barrier anyway (Persistent.cpp).
    const TopLevelLoop& top = kernel.topLevel.at(plan.loop);
    if (!top.clean && !top.tileLoop) return "statements before the loop may synchronise the block";
    return "";
}

} // namespace

// The pipelined loops at the top level of a kernel body (not inside another loop or a
// condition), with what runs before them (TopLevelLoop).
// A persistent kernel's loop over tiles (tileVar its counter) counts as top level: each of its
// runs is one tile's kernel body.
std::map<const For*, TopLevelLoop> topLevelLoops(const Stmt& body, const Var* tileVar) {
    std::map<const For*, TopLevelLoop> out;
    bool clean = true;
    const For* tileLoop = nullptr;
    std::vector<OuterLet> lets;
    std::vector<PreludeItem> prelude;  // in scope where the walk is
    BufferSet written;  // global buffers written so far
    std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
        if (!s) return;
        switch (s->kind) {
        case NodeKind::Seq:
            for (const auto& c : s.as<Seq>()->stmts) walk(c);
            return;
        case NodeKind::Allocate: {
            const size_t scope = prelude.size();
            prelude.push_back({PreludeItem::Kind::Alloc, 0, s, {}, ""});
            walk(s.as<Allocate>()->body);
            prelude.resize(scope);
            return;
        }
        case NodeKind::LetStmt: {
            const auto* l = s.as<LetStmt>();
            Footprint f = Footprint::of(l->value);
            for (const BufferNode* b : f.reads) clean &= b->scope != MemScope::Shared;
            const size_t scope = prelude.size();
            prelude.push_back({PreludeItem::Kind::Let, lets.size(), {}, {}, ""});
            lets.push_back({l->var, l->value, l->loc, tileLoop != nullptr});
            walk(l->body);
            lets.pop_back();
            prelude.resize(scope);
            return;
        }
        case NodeKind::Comment: return;
        case NodeKind::For:
            if (s.as<For>()->forKind == ForKind::Pipelined) {
                out[s.as<For>()] = {clean, lets, prelude, written, tileLoop};
                clean = false;
                return;
            }
            if (tileVar && s.as<For>()->var.get() == tileVar && !tileLoop) {
                tileLoop = s.as<For>();
                walk(tileLoop->body);
                tileLoop = nullptr;
                return;
            }
            break;
        default: break;
        }
        Footprint f = Footprint::of(s);
        for (const auto* set : {&f.reads, &f.writes})
            for (const BufferNode* b : *set) clean &= b->scope != MemScope::Shared;
        for (const TileOp* op : f.ops) clean &= synchronisationFree(*op);
        clean &= s->kind != NodeKind::Barrier && !containsLoop(s, ForKind::Pipelined);
        PreludeItem item{PreludeItem::Kind::Stmt, 0, s, {}, ""};
        item.issue = replayIssue(s, item.writes);
        prelude.push_back(std::move(item));
        for (const BufferNode* b : f.writes)
            if (b->scope == MemScope::Global) written.insert(b);
    };
    walk(body);
    return out;
}

// Whether the loop gets a producer warpgroup (`warp_specialize` asked for it, or left it to the
// compiler); warns when asked for and unsuitable, and logs the choice where it is one. Consumers
// that synchronise among themselves meet at a named barrier of their own. Left to the compiler,
// that form is taken where it costs no occupancy, FlashAttention-3's case: two or more consumer
// warpgroups, of which one block already fills the SM (shared memory or registers); else the
// producer warpgroup's __launch_bounds__(T + 128, 1) would take the SM's other blocks away,
// which the consumers' own barriers leave less room to make up for.
bool chooseWarpSpecialization(const LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx) {
    const For* n = plan.loop;
    const int asked = n->pipeline.warpSpecialize;
    if (asked == 0) return false;
    std::string why = warpSpecializeIssue(plan, kernel, ctx);
    const std::string sync = why.empty() ? consumerSyncReason(plan, kernel) : std::string();
    if (!sync.empty() && asked != 1) {
        const int64_t blocks = ctx.threads >= 256 ? blocksPerSMAsPlanned(plan, kernel, ctx) : 0;
        if (ctx.threads < 256)
            why = sync + fmt::format(": its consumers would meet at a named barrier of their own, which pays with two "
                                     "or more consumer warpgroups; with {} threads (one warpgroup) a producer "
                                     "warpgroup would hold the SM to one block ('warp_specialize = true' asks for it)",
                                     ctx.threads);
        else if (blocks > 1)
            why = sync + fmt::format(": its consumers would meet at a named barrier of their own, and {} blocks of "
                                     "{} threads fit an SM, where a producer warpgroup would hold it to one "
                                     "('warp_specialize = true' asks for it)",
                                     blocks, ctx.threads);
    }
    const bool ws = why.empty();
    if (!ws && asked == 1) ctx.diags.report(DiagId::warn_warp_specialize_unsuitable, SourceRange(n->loc), why);
    if (ws && !sync.empty()) ctx.consumerBarrier = kConsumerBarrier;
    // Logged where it is a choice (targets that can move registers), or was asked for.
    if (ctx.target.has(Feature::Setmaxnreg) || asked == 1)
        ctx.decide(fmt::format("warp specialisation of the loop over {}", n->var->name),
                   ws ? "a producer warpgroup (setmaxnreg) issues the TMA loads" : "none",
                   asked == 1 ? "lowering (warp_specialize = true)" : "lowering",
                   !ws ? why
                   : sync.empty()
                       ? "every producer of the loop is a TMA load and the consumers use no other shared memory or "
                         "block barrier while the producer runs"
                       : fmt::format("every producer of the loop is a TMA load; {}, so the consumers' block barriers "
                                     "become named barrier {} of their {} threads",
                                     sync, kConsumerBarrier, ctx.threads),
                   n->loc);
    return ws;
}

// Producer: one elected thread of the producer warpgroup runs every iteration's copies as soon
// as their version is free. Consumers: every iteration's other statements, between the wait on
// full and the arrival on empty. The consumers' side replaces the loop; the producer's waits in
// kernel.warpSpecialized for splitWarps.
Stmt emitWarpSpecialized(const LoopPlan& plan, PipelinedKernel& kernel, LowerContext& ctx) {
    const For* n = plan.loop;
    const SourceLoc loc = n->loc;
    const Expr& count = n->extent;
    MbarrierProtocol mbarriers(plan, ctx);
    VarPtr kp = makeVar(n->var->name, n->var->dtype), kc = makeVar(n->var->name, n->var->dtype);
    std::vector<Stmt> produced{mbarriers.claim(Expr(kp))}, consumed{mbarriers.consume(Expr(kc))};
    for (size_t i : plan.byPos) {
        if (plan.items[i].tma) produced.push_back(instance(plan, i, Expr(kp), true));
        else consumed.push_back(instance(plan, i, Expr(kc)));
    }
    consumed.push_back(mbarriers.releaseDone(Expr(kc)));
    WarpSpecialized w;
    w.producer = seq({comment(fmt::format("warp-specialised loop over {}: the producer's TMA loads", n->var->name), loc),
                      forLoop(kp, intImm(0), count, ForKind::Serial, seq(produced, loc), loc)});
    // The lets before the loop that the producer reads, declared again in its branch (in a
    // persistent kernel, those of each tile inside its own loop over the tiles).
    const TopLevelLoop& top = kernel.topLevel.at(n);
    const auto prelude = producerPrelude(plan, kernel, nullptr);
    if (top.tileLoop) w.producer = producerOverTiles(plan, top, w.producer, preludeLets(prelude, top));
    else w.producer = replayPrelude(prelude, top, w.producer);
    if (plan.tma.cluster > 1) {
        // A block past the grid's end, launched to fill the last cluster: its producer still
        // loads its share of the multicast tiles for the peers, so its consumers wait for every
        // version and release it everywhere, and do nothing else (persistent kernels have no
        // clusters: Cluster.cpp).
        VarPtr ki = makeVar(n->var->name, n->var->dtype);
        Stmt idle = forLoop(ki, intImm(0), count, ForKind::Serial,
                            seq({mbarriers.consume(Expr(ki)), mbarriers.release(Expr(ki))}, loc), loc);
        idle = replayPrelude(prelude, top, idle);
        const size_t d = size_t(plan.tma.clusterDim);
        w.idleConsumers = seq({comment("a block past the grid's end, launched to fill the last cluster: it only "
                                       "waits for each version and releases it",
                                       loc),
                               idle},
                              loc);
        w.live = binary(BinaryOp::Lt, Expr(ctx.blockVars[d]), ctx.gridExtents[d]);
    }
    w.init = initBarriers(plan, ctx, /*beforeSplit=*/true);
    w.full = plan.tma.full;
    w.empty = plan.tma.empty;
    std::string tiles;
    for (const BufferNode* b : plan.shared)
        if (plan.versions.count(b)) tiles += (tiles.empty() ? "" : ", ") + b->name;
    Stmt header = comment(
        fmt::format("warp-specialised loop over {}: {} versions of {}; the consumers", n->var->name, plan.tma.versions, tiles),
        loc);
    // An unrolled loop has one gemm, ping-pong two or more: never both.
    Stmt out = plan.unroll > 1
                   ? seq({header, unrolledConsumers(plan, mbarriers, ctx)})
                   : seq({header, pingPongEnter(plan, ctx), forLoop(kc, intImm(0), count, ForKind::Serial, seq(consumed, loc), loc),
                          mbarriers.drain(), pingPongLeave(plan, ctx)});
    for (auto it = plan.flat.allocs.rbegin(); it != plan.flat.allocs.rend(); ++it) {
        auto r = plan.versionedBuffers.find((*it)->buffer.get());
        if (r != plan.versionedBuffers.end()) w.tiles.push_back(r->second);  // declared before the split
        else out = allocate((*it)->buffer, out, (*it)->loc);
    }
    for (const BufferNode* b : plan.shared)
        if (plan.versions.count(b)) {
            const Buffer& tile = plan.versionedBuffers.at(b);
            kernel.versioned[b] = tile;
            if (std::find(w.tiles.begin(), w.tiles.end(), tile) == w.tiles.end()) w.tiles.push_back(tile);
        }
    kernel.warpSpecialized = std::move(w);
    return out;
}

// A warp-specialised kernel: the barriers are initialised by all threads, then the producer
// warpgroup (threads T .. T + 127 past the T the rest of the lowering spreads work over) gives
// its registers away and one of its threads runs the producer loop, while the consumers take
// the registers and run the kernel's own code, the pipelined loop replaced by its consumer
// side. The producer threads then end: later block barriers wait only for threads that have
// not exited (PTX ISA, "bar", "exit").
Stmt splitWarps(const Stmt& body, const WarpSpecialized& ws, LowerContext& ctx) {
    class DropAllocations : public IRMutator {
    public:
        std::set<const BufferNode*> drop;

    protected:
        Stmt mutateAllocate(const Allocate* n, const Stmt& self) override {
            if (drop.count(n->buffer.get())) return mutate(n->body);
            return IRMutator::mutateAllocate(n, self);
        }
    } dropper;
    for (const auto& t : ws.tiles) dropper.drop.insert(t.get());
    Stmt consumers = dropper.mutate(body);
    const int64_t producers = 128, registers = 40;
    // setmaxnreg moves registers inside the block's allocation, which is fixed at launch: with
    // __launch_bounds__(T + 128, 1) every thread starts with the most one block per SM allows
    // (a multiple of 8, at most 255). The consumers may take what the producers give up and
    // no more, within 240 a thread: a larger request waits forever (seen on an H200 at T = 512).
    const int64_t block = ctx.threads + producers;
    const int64_t perThread = ctx.target.maxRegistersPerThread > 0 ? ctx.target.maxRegistersPerThread : 255;
    const int64_t atLaunch = std::min<int64_t>(perThread, ctx.target.registersPerSM / block) / 8 * 8;
    int64_t raised = std::min<int64_t>(240, (atLaunch * block - producers * registers) / ctx.threads / 8 * 8);
    // Another variable for the thread index: the simplifier knows ctx.tx() < T and would fold
    // the test away.
    VarPtr thread = makeVar(ctx.tx().as<Var>()->name, DType::I32, VarRole::ThreadIndex);
    SourceLoc loc = body->loc;
    Stmt producer = seq({evaluate(call("setmaxnreg_dec", DType::I32, {intImm(registers)}), loc),
                         ifThenElse(binary(BinaryOp::Eq, Expr(thread), intImm(ctx.threads)), ws.producer, {}, loc)});
    // In a cluster the consumers end with a cluster barrier: no block exits (and its shared
    // memory goes) while a peer may still arrive on its barriers. The producers exit before it
    // (barrier.cluster waits for the threads that have not exited).
    if (ws.idleConsumers) consumers = ifThenElse(ws.live, consumers, ws.idleConsumers, loc);
    std::vector<Stmt> consumerSide{evaluate(call("setmaxnreg_inc", DType::I32, {intImm(raised)}), loc), consumers};
    if (ws.idleConsumers) consumerSide.push_back(evaluate(call("cluster_sync", DType::I32, {}), loc));
    consumers = seq(consumerSide, loc);
    Stmt out = seq({ws.init,
                    comment(fmt::format("warp specialisation: threads {} .. {} are the producer warpgroup", ctx.threads,
                                        ctx.threads + producers - 1),
                            loc),
                    ifThenElse(binary(BinaryOp::Ge, Expr(thread), intImm(ctx.threads)), producer, consumers, loc)});
    out = allocate(ws.full, allocate(ws.empty, out, loc), loc);
    for (auto it = ws.tiles.rbegin(); it != ws.tiles.rend(); ++it) out = allocate(*it, out, loc);
    ctx.producerThreads = producers;
    return out;
}

} // namespace tlc::pipeline

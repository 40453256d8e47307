// The software pipeline (docs/lowering.md, pass "pipeline-loops"). On targets with cp.async,
// `for k in pipelined(n, stages = s)` becomes a modulo schedule: the top-level statements of
// the body get a stage σ and a position in the order of one step; step t runs, in that order,
// each statement for iteration t - σ. Copies from global into shared memory that later stages
// read become asynchronous, and the shared buffers they fill get one version per iteration in
// flight (a leading dimension indexed by iteration % versions). The loop becomes
//
//     prologue   steps 0 .. S-1           (statements of stage <= t, guarded by t - σ < n)
//     steady     steps S .. n-1           (every statement, no guards)
//     epilogue   steps max(n, S) .. n+S-1 (statements of stage > t - n)
//
// with S the last stage. Every step that runs commits one cp.async group (after its last async
// copy, even when the step has none), so that at the top of step t exactly t groups are
// committed; a step with statements that read async-filled buffers starts with
// `cp_async_wait_group(N)`, N the number of the newest groups it may leave in flight, and a
// barrier. That barrier publishes the copies of every thread and also ends the previous step,
// the last reader of the versions this step's copies overwrite. Other barriers are
// insert-barriers' (which knows that different versions of a buffer do not overlap).
//
// On targets with TMA, producers that qualify (ops/copy/CopyTma.cpp) become TMA loads ordered
// by mbarriers instead (docs/lowering.md, "TMA copies and the mbarrier pipeline"): per version
// a `full` barrier (thread 0 announces the boxes' bytes, TMA completes them; consumers wait on
// it) and an `empty` one (every thread arrives after its last read of the version; thread 0
// waits on it before loading the version again). Those buffers need no cp.async group, wait or
// block barrier; copies that do not qualify stay cp.async, with the reason recorded.
//
// On other targets the loop stays as it is (lower-tile-ops makes it a plain loop); the order
// and stage lists are checked everywhere.
#include "passes/Passes.h"
#include "passes/PipelineStages.h"
#include "passes/SharedLiveness.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "ops/annotate_layout/AnnotateLayout.h"
#include "ops/copy/Copy.h"
#include "ops/gemm/Gemm.h"
#include "ops/gemm/GemmWgmma.h"
#include "ops/LowerContext.h"
#include "ops/OpUtil.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

namespace tlc {

using namespace ir;

namespace {

using BufferSet = std::set<const BufferNode*>;

// What a statement touches: buffers read and written (tile-op regions, loads, stores) and the
// tile ops it holds.
class Footprint : public IRVisitor {
public:
    BufferSet reads, writes;
    std::vector<const TileOp*> ops;

    static Footprint of(const Stmt& s) {
        Footprint f;
        f.visit(s);
        return f;
    }
    bool touches(const BufferNode* b) const { return reads.count(b) || writes.count(b); }

protected:
    void visitLoad(const Load* n) override {
        reads.insert(n->buffer.get());
        IRVisitor::visitLoad(n);
    }
    void visitStore(const Store* n) override {
        writes.insert(n->buffer.get());
        IRVisitor::visitStore(n);
    }
    void visitTileOpStmt(const TileOpStmt* n) override {
        for (const Region* r : n->op->reads()) reads.insert(r->buffer.get());
        for (const Region* r : n->op->writes()) writes.insert(r->buffer.get());
        ops.push_back(n->op.get());
        IRVisitor::visitTileOpStmt(n);
    }
};

// How many places access each buffer (a region or a load or store each).
class AccessCounter : public IRVisitor {
public:
    std::map<const BufferNode*, int> count;

protected:
    void visitLoad(const Load* n) override {
        ++count[n->buffer.get()];
        IRVisitor::visitLoad(n);
    }
    void visitStore(const Store* n) override {
        ++count[n->buffer.get()];
        IRVisitor::visitStore(n);
    }
    void visitTileOpStmt(const TileOpStmt* n) override {
        for (const Region* r : n->op->reads()) ++count[r->buffer.get()];
        for (const Region* r : n->op->writes()) ++count[r->buffer.get()];
        IRVisitor::visitTileOpStmt(n);
    }
};

std::map<const BufferNode*, int> countAccesses(const Stmt& s) {
    AccessCounter c;
    c.visit(s);
    return c.count;
}

class HasLoad : public IRVisitor {
public:
    bool found = false;

protected:
    void visitLoad(const Load*) override { found = true; }
};

bool containsPipelined(const Stmt& s) {
    class Finder : public IRVisitor {
    public:
        bool found = false;

    protected:
        void visitFor(const For* n) override {
            found |= n->forKind == ForKind::Pipelined;
            IRVisitor::visitFor(n);
        }
    } f;
    f.visit(s);
    return f.found;
}

// The loop body as a list of top-level statements: sequences flattened, `let`s of pure values
// substituted into what follows, allocations hoisted (a scalar's initial value becomes a store
// where it was declared). False when a `let` reads memory (its value could change between
// stages).
struct FlatBody {
    std::vector<Stmt> stmts;
    std::vector<const Allocate*> allocs;  // outermost first
};

bool flatten(const Stmt& s, std::vector<std::pair<VarPtr, Expr>>& lets, FlatBody& out) {
    if (!s) return true;
    switch (s->kind) {
    case NodeKind::Seq:
        for (const auto& c : s.as<Seq>()->stmts)
            if (!flatten(c, lets, out)) return false;
        return true;
    case NodeKind::LetStmt: {
        const auto* l = s.as<LetStmt>();
        HasLoad h;
        h.visit(l->value);
        if (h.found) return false;
        lets.push_back({l->var, substitute(l->value, lets)});
        bool ok = flatten(l->body, lets, out);
        lets.pop_back();
        return ok;
    }
    case NodeKind::Allocate: {
        const auto* a = s.as<Allocate>();
        out.allocs.push_back(a);
        if (a->init) out.stmts.push_back(store(a->buffer, {}, substitute(a->init, lets), a->loc));
        return flatten(a->body, lets, out);
    }
    case NodeKind::Comment: return true;
    default: out.stmts.push_back(lets.empty() ? s : substitute(s, lets)); return true;
    }
}

std::string joinInts(const std::vector<int>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s;
}

// Rewrites one instance of a statement: versioned buffers get their version as leading index,
// and the async producer's copy becomes an async copy.
class Versioner : public IRMutator {
public:
    struct Version {
        Buffer buffer;  // the versioned buffer
        Expr slot;      // which version this instance touches
    };
    std::map<const BufferNode*, Version> map;
    bool asyncCopy = false;

protected:
    Expr mutateLoad(const Load* n, const Expr& self) override {
        auto it = map.find(n->buffer.get());
        if (it == map.end()) return IRMutator::mutateLoad(n, self);
        bool changed = false;
        std::vector<Expr> idx{it->second.slot};
        for (const auto& i : mutateAll(n->indices, changed)) idx.push_back(i);
        return load(it->second.buffer, idx, n->lanes);
    }
    Stmt mutateStore(const Store* n, const Stmt& self) override {
        auto it = map.find(n->buffer.get());
        if (it == map.end()) return IRMutator::mutateStore(n, self);
        bool changed = false;
        std::vector<Expr> idx{it->second.slot};
        for (const auto& i : mutateAll(n->indices, changed)) idx.push_back(i);
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
        if (asyncCopy)
            if (const auto* c = dynamic_cast<const ops::CopyOp*>(op.get())) op = c->withAsync(true);
        return tileOp(op, n->loc);
    }
};

// The layouts annotate_layout fixed, by buffer (TMA must produce them).
std::map<const BufferNode*, ops::SharedLayoutName> annotatedLayouts(const Stmt& body) {
    class Finder : public IRVisitor {
    public:
        std::map<const BufferNode*, ops::SharedLayoutName> found;

    protected:
        void visitTileOpStmt(const TileOpStmt* n) override {
            if (const auto* a = dynamic_cast<const ops::AnnotateLayoutOp*>(n->op.get()))
                found[a->buffer().get()] = a->layout();
        }
    } f;
    f.visit(body);
    return f.found;
}

Expr addressOf(const Buffer& b, const Expr& index) { return call("address_of", DType::I64, {load(b, {index})}); }
Stmt mbarrierCall(const char* name, std::vector<Expr> args, SourceLoc loc) {
    return evaluate(call(name, DType::I32, std::move(args)), loc);
}

// Tile ops that never wait at a block barrier when they are not given shared memory.
bool synchronisationFree(const TileOp& op) {
    static const std::set<std::string> ops = {"copy", "clear", "fill", "atomic_add", "annotate_layout"};
    return ops.count(op.name()) > 0;
}

// A `let` around a top-level pipelined loop (between the grid and the loop): a warp-specialised
// producer that needs its value declares it again in its own branch, which it can only when the
// value reads nothing the consumer threads alone hold or may still change; `issue` says why not
// (empty: it can).
struct OuterLet {
    VarPtr var;
    Expr value;
    SourceLoc loc;
    std::string issue;
};

// What a top-level pipelined loop needs to know about the code before it: whether that is free
// of block barriers (no shared memory, only ops that never synchronise: warp specialisation
// needs both), and the lets around it, outermost first.
struct TopLevelLoop {
    bool clean = true;
    std::vector<OuterLet> lets;
    BufferSet writtenBefore;  // global buffers the code before the loop writes
};

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

class LoadedBuffers : public IRVisitor {
public:
    std::vector<const BufferNode*> buffers;  // in order of appearance

protected:
    void visitLoad(const Load* n) override {
        if (std::find(buffers.begin(), buffers.end(), n->buffer.get()) == buffers.end()) buffers.push_back(n->buffer.get());
        IRVisitor::visitLoad(n);
    }
};

// The pipelined loops at the top level of a kernel body (not inside another loop or a
// condition), with what runs before them (TopLevelLoop).
std::map<const For*, TopLevelLoop> topLevelLoops(const Stmt& body) {
    std::map<const For*, TopLevelLoop> out;
    bool clean = true;
    std::vector<OuterLet> lets;
    BufferSet written;  // global buffers written so far
    std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
        if (!s) return;
        switch (s->kind) {
        case NodeKind::Seq:
            for (const auto& c : s.as<Seq>()->stmts) walk(c);
            return;
        case NodeKind::Allocate: walk(s.as<Allocate>()->body); return;
        case NodeKind::LetStmt: {
            const auto* l = s.as<LetStmt>();
            Footprint f;
            f.visit(l->value);
            for (const BufferNode* b : f.reads) clean &= b->scope != MemScope::Shared;
            LoadedBuffers loads;
            loads.visit(l->value);
            std::string issue;
            for (const BufferNode* b : loads.buffers)
                if (issue.empty()) issue = rereadIssue(b, written);
            lets.push_back({l->var, l->value, l->loc, issue});
            walk(l->body);
            lets.pop_back();
            return;
        }
        case NodeKind::Comment: return;
        case NodeKind::For:
            if (s.as<For>()->forKind == ForKind::Pipelined) {
                out[s.as<For>()] = {clean, lets, written};
                clean = false;
                return;
            }
            break;
        default: break;
        }
        Footprint f = Footprint::of(s);
        for (const auto* set : {&f.reads, &f.writes})
            for (const BufferNode* b : *set) clean &= b->scope != MemScope::Shared;
        for (const TileOp* op : f.ops) clean &= synchronisationFree(*op);
        clean &= s->kind != NodeKind::Barrier && !containsPipelined(s);
        for (const BufferNode* b : f.writes)
            if (b->scope == MemScope::Global) written.insert(b);
    };
    walk(body);
    return out;
}

// The variables an expression or a statement reads (tile ops' positions included).
class VarsUsed : public IRVisitor {
public:
    std::set<const Var*> vars;

protected:
    void visitVar(const Var* n) override { vars.insert(n); }
};

class Pipeliner : public IRMutator {
public:
    // Shared buffers this pass replaced by versioned ones.
    const std::map<const BufferNode*, Buffer>& versioned() const { return versioned_; }

    // A warp-specialised loop (at most one per kernel): the producer's loop, the barriers and
    // their initialisation, and the tiles the producer fills (declared before the split).
    struct WarpSpecialized {
        Stmt producer, init;
        Buffer full, empty;
        std::vector<Buffer> tiles;
    };
    const std::optional<WarpSpecialized>& warpSpecialized() const { return ws_; }

    Pipeliner(LowerContext& ctx, const Stmt& body)
        : ctx_(ctx), body_(body), counts_(countAccesses(body)), annotated_(annotatedLayouts(body)),
          topLevel_(topLevelLoops(body)) {}

protected:
    Stmt mutateFor(const For* n, const Stmt& self) override {
        ++depth_;
        Stmt body = mutate(n->body);  // inner loops first
        --depth_;
        if (n->forKind == ForKind::Pipelined) {
            if (Stmt s = pipeline(n)) return s;
        }
        if (body.same(n->body)) return self;
        return forLoop(n->var, n->min, n->extent, n->forKind, body, n->loc, n->pipeline, n->step);
    }

    // A pipeline inside a `while` runs again with the next iteration, like one inside a loop.
    Stmt mutateWhile(const While* n, const Stmt& self) override {
        ++depth_;
        Stmt out = IRMutator::mutateWhile(n, self);
        --depth_;
        return out;
    }

    Stmt mutateAllocate(const Allocate* n, const Stmt& self) override {
        Stmt body = mutate(n->body);
        auto it = versioned_.find(n->buffer.get());
        Buffer b = it != versioned_.end() ? it->second : n->buffer;
        if (body.same(n->body) && b == n->buffer) return self;
        return allocate(b, body, n->loc, n->init);
    }

private:
    LowerContext& ctx_;
    Stmt body_;                                // the kernel's tile-level body, for the shared-memory plan
    std::map<const BufferNode*, int> counts_;  // accesses in the whole kernel
    std::map<const BufferNode*, Buffer> versioned_;
    std::map<const BufferNode*, ops::SharedLayoutName> annotated_;
    int depth_ = 0;  // loops around the one being pipelined
    std::map<const For*, TopLevelLoop> topLevel_;  // pipelined loops at the kernel's top level

    struct Item {
        Stmt stmt;
        Footprint fp;
        int stage = 0;
        int pos = 0;
        bool async = false;            // an async producer
        bool tma = false;              // ... issued as a TMA load
        bool tmaReader = false;        // reads a TMA-filled buffer
        std::vector<const BufferNode*> asyncReads;  // async-filled buffers it reads
        int waitAllows = INT_MAX;      // groups it may leave in flight at the top of its step
    };

    // A shared buffer the pipeline versions: its one writer, versions, whether it fills async.
    struct Versioned {
        size_t writer;
        int versions;
        bool async;
    };
    using Versions = std::map<const BufferNode*, Versioned>;

    // Checks the order/stage lists; false after reporting.
    bool checkLists(const For* n, size_t count) {
        const PipelineInfo& p = n->pipeline;
        bool ok = true;
        using Named = std::pair<const char*, const std::vector<int>*>;
        for (const auto& [name, list] : {Named{"order", &p.order}, Named{"stage", &p.stage}}) {
            if (list->empty() || list->size() == count) continue;
            ctx_.diags.report(DiagId::err_pipeline_list_length, SourceRange(n->loc), name, list->size(),
                              list->size() == 1 ? "" : "s", count, count == 1 ? "" : "s");
            ok = false;
        }
        if (!ok) return false;
        if (!p.order.empty()) {
            std::vector<int> sorted = p.order;
            std::sort(sorted.begin(), sorted.end());
            for (size_t i = 0; i < sorted.size(); ++i)
                if (sorted[i] != int(i)) {
                    ctx_.diags.report(DiagId::err_pipeline_order_not_permutation, SourceRange(n->loc), count - 1,
                                      joinInts(p.order));
                    return false;
                }
        }
        int last = p.stages > 0 ? p.stages - 1 : INT_MAX;
        for (int s : p.stage)
            if (s < 0 || s > last) {
                ctx_.diags.report(DiagId::err_pipeline_stage_range, SourceRange(n->loc), s,
                                  p.stages > 0 ? std::to_string(last) : std::string("any"));
                return false;
            }
        return true;
    }

    // Why statement i cannot be a producer stage (a copy into a shared buffer that is versioned
    // by the pipeline); empty when it can. `wrongSchedule` is set when the reason makes a schedule
    // that puts the tile's uses at several stages wrong in itself (two writers, a read before the
    // fill), rather than beyond what this compiler's pipelines can version.
    std::string producerIssue(const std::vector<Item>& items, size_t i, const std::map<const BufferNode*, int>& inLoop,
                              const BufferSet& loopWrites, bool* wrongSchedule = nullptr) const {
        const auto* t = items[i].stmt.as<TileOpStmt>();
        const auto* copy = t ? dynamic_cast<const ops::CopyOp*>(t->op.get()) : nullptr;
        if (!copy || copy->src().buffer->scope != MemScope::Global || copy->dst().buffer->scope != MemScope::Shared)
            return "it is not a copy from global to shared memory";
        const BufferNode* b = copy->dst().buffer.get();
        std::string name = "'" + copy->dst().buffer->name + "'";
        if (!copy->dst().coversWholeBuffer()) return "the copy fills only part of " + name;
        auto total = counts_.find(b);
        auto inside = inLoop.find(b);
        if (total == counts_.end() || inside == inLoop.end() || total->second != inside->second)
            return name + " is also used outside the loop";
        for (size_t j = 0; j < items.size(); ++j) {
            if (j == i) continue;
            if ((items[j].fp.writes.count(b) || (j < i && items[j].fp.reads.count(b))) && wrongSchedule)
                *wrongSchedule = true;
            if (items[j].fp.writes.count(b)) return name + " is written by another statement of the loop";
            if (j < i && items[j].fp.reads.count(b)) return name + " is read before the copy fills it";
            if (items[j].fp.touches(b))
                for (const TileOp* op : items[j].fp.ops) {
                    bool uses = false;
                    for (const Region* r : op->reads()) uses |= r->buffer.get() == b;
                    if (uses && !op->mapRegions([](const Region& r) { return r; }))
                        return "'" + op->name() + "' cannot read a versioned " + name;
                }
        }
        if (loopWrites.count(copy->src().buffer.get()))
            return "the loop writes '" + copy->src().buffer->name + "', which the copy reads";
        for (const auto& e : copy->src().starts) {
            Footprint f;
            f.visit(e);
            for (const auto* r : f.reads)
                if (loopWrites.count(r))
                    return "the copy's position depends on '" + r->name + "', which the loop writes";
        }
        return "";
    }

    // A loop the schedules here can rewrite: it counts from 0 in steps of 1.
    static bool countsFromZero(const For* n) {
        const int64_t* mn = asConstInt(n->min);
        const int64_t* st = asConstInt(n->step);
        return mn && *mn == 0 && (st ? *st == 1 : !n->step);
    }

    // The body's statements as schedule items (positions from the `order` list, if any), and
    // the buffers the loop writes.
    static std::vector<Item> itemsOf(const FlatBody& flat, const PipelineInfo& info, BufferSet& loopWrites) {
        std::vector<Item> items(flat.stmts.size());
        for (size_t i = 0; i < items.size(); ++i) {
            items[i].stmt = flat.stmts[i];
            items[i].fp = Footprint::of(flat.stmts[i]);
            items[i].pos = info.order.empty() ? int(i) : info.order[i];
            loopWrites.insert(items[i].fp.writes.begin(), items[i].fp.writes.end());
        }
        return items;
    }

    // The copies that can be producers (producerIssue) and whose tile a later statement reads.
    std::vector<size_t> readProducers(const std::vector<Item>& items, const std::map<const BufferNode*, int>& inLoop,
                                      const BufferSet& loopWrites) const {
        std::vector<size_t> producers;
        for (size_t i = 0; i < items.size(); ++i) {
            if (!producerIssue(items, i, inLoop, loopWrites).empty()) continue;
            const BufferNode* b = producedTile(items[i]).buffer.get();
            bool read = false;
            for (size_t j = i + 1; j < items.size(); ++j) read |= items[j].fp.reads.count(b) > 0;
            if (read) producers.push_back(i);
        }
        return producers;
    }

    // The tile a producer fills, and its size.
    static const ir::Region& producedTile(const Item& producer) {
        return static_cast<const ops::CopyOp*>(producer.stmt.as<TileOpStmt>()->op.get())->dst();
    }
    static int64_t tileBytes(const ir::Region& r) { return (r.elements() * dtypeBits(r.buffer->dtype) + 7) / 8; }

    // Targets without cp.async (docs/lowering.md, "Prefetching through registers"): each copy
    // from global into a shared tile that the loop reads later becomes two, through a fragment
    // of the tile's shape. Iteration k stores the tile it was given into shared memory, starts
    // loading iteration k + 1's into the fragment, then computes; the loads' latency hides
    // behind the computation, and the tile keeps one version:
    //
    //     if (n > 0) copy(G(0), T_next)
    //     for k: copy(T_next, T); barrier; if (k + 1 < n) copy(G(k + 1), T_next); <the rest>
    //
    // insert-barriers adds the one before the store to T (the previous iteration's reads).
    // Nothing (and `why` says why) when no copy qualifies or the fragments would take too many
    // registers.
    Stmt prefetchThroughRegisters(const For* n, const FlatBody& flat, std::string& why) {
        if (!countsFromZero(n)) return {};
        BufferSet loopWrites;
        std::vector<Item> items = itemsOf(flat, n->pipeline, loopWrites);
        std::vector<size_t> producers = readProducers(items, countAccesses(n->body), loopWrites);
        int64_t bytes = 0;
        std::string tiles;
        for (size_t i : producers) {
            bytes += tileBytes(producedTile(items[i]));
            tiles += (tiles.empty() ? "" : ", ") + producedTile(items[i]).buffer->name;
        }
        if (producers.empty()) {
            why = "no copy from global into a shared tile that the loop reads later can be a producer";
            return {};
        }
        // At most 64 registers a thread for the next iteration's tiles.
        const int64_t perThread = (bytes + ctx_.threads - 1) / std::max<int64_t>(ctx_.threads, 1), limit = 256;
        if (perThread > limit) {
            why = fmt::format("{} would take {} bytes of registers a thread (more than {})", tiles, perThread, limit);
            return {};
        }
        const VarPtr& k = n->var;
        SourceLoc loc = n->loc;
        std::vector<Stmt> first, top, prefetch, rest;
        std::vector<Buffer> fragments;
        for (size_t i = 0; i < items.size(); ++i) {
            if (std::find(producers.begin(), producers.end(), i) == producers.end()) {
                rest.push_back(items[i].stmt);
                continue;
            }
            const auto* t = items[i].stmt.as<TileOpStmt>();
            const auto* copy = static_cast<const ops::CopyOp*>(t->op.get());
            const Buffer& tile = copy->dst().buffer;
            Buffer next = makeBuffer(tile->name + "_next", tile->dtype, MemScope::Fragment, tile->shape);
            fragments.push_back(next);
            // Placed as the copy would split the tile (16-byte vectors where the rows allow):
            // the same global loads as without the prefetch, and stores of whole vectors.
            std::vector<int64_t> shape;
            if (constantShape(next, shape) && shape.size() == 2) {
                int64_t vec = ops::widestVector(shape[1], dtypeBytes(tile->dtype));
                if (auto f = layout::rowMajorCopyFragment(shape, ctx_.threads, vec)) ctx_.layouts.emplace(next.get(), *f);
            }
            Stmt load = tileOp(std::make_shared<ops::CopyOp>(copy->src(), wholeBuffer(next)), t->loc);
            first.push_back(simplify(substitute(load, {{k, n->min}})));
            top.push_back(tileOp(std::make_shared<ops::CopyOp>(wholeBuffer(next), copy->dst()), t->loc));
            prefetch.push_back(substitute(load, {{k, Expr(k) + 1}}));
        }
        // The loads go out after the barrier that publishes the tiles: a barrier may wait for
        // every load in flight, and these should overlap the computation instead.
        top.push_back(barrier(loc));
        top.push_back(ifThenElse(binary(BinaryOp::Lt, Expr(k) + 1, n->extent), seq(prefetch, loc), {}, loc));
        top.insert(top.end(), rest.begin(), rest.end());
        // The first tiles only for a loop that runs (the copies read nothing past the tensors,
        // but an empty loop should not read at all).
        Stmt out = seq({simplify(ifThenElse(binary(BinaryOp::Lt, intImm(0), n->extent), seq(first, loc), {}, loc)),
                        forLoop(k, n->min, n->extent, ForKind::Serial, seq(top, loc), loc)},
                       loc);
        for (auto it = flat.allocs.rbegin(); it != flat.allocs.rend(); ++it) out = allocate((*it)->buffer, out, (*it)->loc);
        for (auto it = fragments.rbegin(); it != fragments.rend(); ++it) out = allocate(*it, out, loc);
        ctx_.decide(fmt::format("pipelined loop over {}", k->name), "prefetch through registers", "lowering",
                    fmt::format("target '{}' has no cp_async: each iteration starts loading the next one's {} into "
                                "registers ({} bytes a thread) before it computes and stores them to shared memory "
                                "at the top of the next; one version of each tile",
                                ctx_.target.name, tiles, perThread),
                    loc);
        return out;
    }

    Stmt pipeline(const For* n) {
        FlatBody flat;
        std::vector<std::pair<VarPtr, Expr>> lets;
        if (!flatten(n->body, lets, flat)) return {};
        size_t m = flat.stmts.size();
        const PipelineInfo& info = n->pipeline;
        if (!checkLists(n, m)) return {};
        // stages = 0 or 1 (IR building makes both 1): TileLang's "no pipelining".
        if (info.stages == 1) {
            if (m > 0)
                ctx_.decide(fmt::format("pipelined loop over {}", n->var->name), "not pipelined",
                            "stages = 0 or 1",
                            "a plain loop: each iteration's copies complete before the statements that read them",
                            n->loc);
            return {};
        }
        // GPUs without cp.async (CDNA) prefetch through registers where they can.
        std::string noPrefetch;
        if (!ctx_.target.has(Feature::CpAsync) && ctx_.target.backend != Backend::Cpu && m > 0 && info.stage.empty() &&
            info.order.empty() && !containsPipelined(n->body)) {
            if (Stmt s = prefetchThroughRegisters(n, flat, noPrefetch)) return s;
        }
        if (!ctx_.target.has(Feature::CpAsync) && m > 0)
            ctx_.decide(fmt::format("pipelined loop over {}", n->var->name), "not pipelined", "lowering",
                        fmt::format("target '{}' has no cp_async{}: the loop runs its iterations in order",
                                    ctx_.target.name,
                                    noPrefetch.empty() ? "" : " and no prefetch through registers: " + noPrefetch),
                        n->loc);
        // Where the loop is not pipelined, an author's stage list is still checked: whether a
        // schedule is valid is the language's question, the same on every target.
        const bool plain = !ctx_.target.has(Feature::CpAsync) || m == 0 || containsPipelined(n->body);
        if (plain && info.stage.empty()) return {};
        if (!countsFromZero(n)) return {};

        BufferSet loopWrites;
        std::vector<Item> items = itemsOf(flat, info, loopWrites);
        std::map<const BufferNode*, int> inLoop = countAccesses(n->body);

        // Stages: the author's, or copies that can be producers at stage 0 and the rest last.
        int last = 0;
        int inferred = -1;  // this loop's number among those whose stages are inferred
        if (!info.stage.empty()) {
            for (size_t i = 0; i < m; ++i) last = std::max(last, items[i].stage = info.stage[i]);
        } else {
            int stages = info.stages;
            // (a plain loop with no stage list returned above)
            std::vector<size_t> producers = readProducers(items, inLoop, loopWrites);
            if (producers.empty()) return {};
            StageBudget budget;
            std::map<const BufferNode*, int> versions;  // of the loops pipelined before this one
            for (const auto& [b, nb] : versioned_)
                if (const int64_t* v = asConstInt(nb->shape[0])) versions[b] = int(*v);
            std::vector<const BufferNode*> dsts;
            for (size_t i : producers) {
                const auto& dst = producedTile(items[i]);
                int64_t bytes = tileBytes(dst);
                budget.perStage += bytes;
                budget.buffers += fmt::format("{}{} {}", budget.buffers.empty() ? "" : ", ", dst.buffer->name, bytes);
                dsts.push_back(dst.buffer.get());
            }
            budget.planned = [&, versions, dsts](int s) mutable {
                for (const BufferNode* b : dsts) versions[b] = s;
                return plannedSharedBytes(body_, versions, true);
            };
            // A fixed `stages` is checked with the whole pool by plan-shared-memory.
            if (stages == 0) {
                stages = inferStages(budget, ctx_, n->loc);
                inferred = int(ctx_.inferredStages.size()) - 1;
            }
            last = stages - 1;
            for (auto& it : items) it.stage = last;
            for (size_t i : producers) items[i].stage = 0;
        }
        if (last == 0) return {};

        // Registers and global memory get no versions: a fragment, local or global buffer that
        // the loop writes and uses at two stages would be overwritten by the next iteration's
        // earlier stage before this one's later stage reads it. Such a loop runs in order.
        for (const auto& it : items)
            for (const auto* b : it.fp.writes) {
                if (b->scope == MemScope::Shared) continue;
                std::set<int> at;
                for (const auto& other : items)
                    if (other.fp.touches(b)) at.insert(other.stage);
                if (at.size() < 2) continue;
                if (!plain)
                    ctx_.decide(fmt::format("pipelined loop over {}", n->var->name), "not pipelined", "lowering",
                                fmt::format("'{}' ({} memory) is written in the loop and used at stages {} and {}: only "
                                            "shared buffers get a version per stage, so the loop runs its iterations "
                                            "in order",
                                            b->name, scopeName(b->scope), *at.begin(), *at.rbegin()),
                                n->loc);
                return {};
            }

        // Shared buffers used at more than one stage get versions; their one writer must be a
        // copy that can be a producer, read at its own stage or later.
        std::map<const BufferNode*, Versioned> vers;
        std::vector<const BufferNode*> shared;  // in order of first use (pointers do not order output)
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
        for (const auto* b : shared) {
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
                    why = producerIssue(items, i, inLoop, loopWrites, &wrongSchedule);
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
                if (wrongSchedule) ctx_.diags.report(DiagId::err_pipeline_schedule, SourceRange(n->loc), text);
                else if (!plain)
                    ctx_.decide(fmt::format("pipelined loop over {}", n->var->name), "not pipelined", "lowering",
                                text + ", which the pipeline cannot give versions: the loop runs its iterations in order",
                                n->loc);
                return {};
            }
            vers[b] = {writer, versions, async};
        }
        if (plain) return {};

        // Versioned buffers: a leading dimension, one entry per iteration in flight.
        std::map<const BufferNode*, Buffer> replaced;
        for (const auto& [b, v] : vers) {
            Buffer old = static_cast<const ops::CopyOp*>(items[v.writer].stmt.as<TileOpStmt>()->op.get())->dst().buffer;
            std::vector<Expr> shape{intImm(v.versions)};
            shape.insert(shape.end(), old->shape.begin(), old->shape.end());
            replaced[b] = makeBuffer(old->name, old->dtype, old->scope, shape);
            items[v.writer].async = v.async;
            ctx_.pipelinedShared[old->name] = {v.versions, last + 1, n->loc, inferred};
        }
        Tma tma = chooseTma(items, vers, shared, n->loc);
        bool ws = false;
        if (info.warpSpecialize != 0) {
            std::string why = warpSpecializeIssue(n, items, vers, bool(tma.full));
            ws = why.empty();
            if (!ws && info.warpSpecialize == 1)
                ctx_.diags.report(DiagId::warn_warp_specialize_unsuitable, SourceRange(n->loc), why);
            // Logged where it is a choice (targets that can move registers), or was asked for.
            if (ctx_.target.has(Feature::Setmaxnreg) || info.warpSpecialize == 1)
                ctx_.decide(fmt::format("warp specialisation of the loop over {}", n->var->name),
                            ws ? "a producer warpgroup (setmaxnreg) issues the TMA loads" : "none",
                            info.warpSpecialize == 1 ? "lowering (warp_specialize = true)" : "lowering",
                            ws ? "every producer of the loop is a TMA load and the consumers use no other shared "
                                 "memory or block barrier while the producer runs"
                               : why,
                            n->loc);
        }
        const size_t inFlight = chooseGroupInFlight(n, items, vers, bool(tma.full));
        // Waits: a reader of an async buffer at distance d needs the group committed d steps
        // back; at the top of its step t groups are committed, so d - 1 may stay in flight.
        size_t commitAfter = m;  // the async producer last in the order
        for (size_t i = 0; i < m; ++i)
            if (items[i].async && !items[i].tma && (commitAfter == m || items[i].pos > items[commitAfter].pos))
                commitAfter = i;
        for (auto& it : items)
            for (const auto& [b, v] : vers)
                if (v.async && !items[v.writer].tma && it.fp.reads.count(b) && &it != &items[v.writer]) {
                    it.asyncReads.push_back(b);
                    it.waitAllows = std::min(it.waitAllows, it.stage - items[v.writer].stage - 1);
                }

        std::vector<size_t> byPos(m);
        for (size_t i = 0; i < m; ++i) byPos[size_t(items[i].pos)] = i;
        Expr count = n->extent;
        SourceLoc loc = n->loc;

        // Statement i for iteration `iter`.
        auto instance = [&](size_t i, const Expr& iter, bool elected = false) {
            Stmt s = substitute(items[i].stmt, {{n->var, iter}});
            Versioner v;
            v.asyncCopy = items[i].async;
            for (const auto& [b, ver] : vers)
                if (items[i].fp.touches(b)) v.map[b] = {replaced[b], simplify(iter % int64_t(ver.versions))};
            s = simplify(v.map.empty() ? s : v.mutate(s));
            if (items[i].tma) {
                const auto* t = s.as<TileOpStmt>();
                const auto* c = static_cast<const ops::CopyOp*>(t->op.get());
                Region bar{tma.full, {simplify(iter % tma.versions)}, {1}};
                s = tileOp(c->withTma(bar, elected), t->loc);
            }
            if (i == inFlight) {
                const auto* t = s.as<TileOpStmt>();
                s = tileOp(static_cast<const ops::GemmOp*>(t->op.get())->withGroupInFlight(), t->loc);
            }
            return s;
        };
        // The mbarrier protocol around the TMA producers and their readers (for iteration iter).
        auto slot = [&](const Expr& iter) { return simplify(iter % tma.versions); };
        auto parity = [&](const Expr& iter) { return simplify(binary(BinaryOp::BitAnd, iter / tma.versions, intImm(1))); };
        auto claim = [&](const Expr& iter) {
            // The version is free once every consumer arrived on empty (phase parity ^ 1 is the
            // previous round; the first round's wait passes at once).
            Expr free = simplify(binary(BinaryOp::BitXor, parity(iter), intImm(1)));
            Stmt expect = mbarrierCall("mbarrier_arrive_expect_tx", {addressOf(tma.full, slot(iter)), intImm(tma.bytes)}, loc);
            // The prologue's iterations are all of round 0: no wait (a spin loop in thread 0's
            // branch there makes ptxas serialise the loop's rs-form wgmmas).
            const int64_t* known = asConstInt(iter);
            if (known && *known < tma.versions) return expect;
            return seq({mbarrierCall("mbarrier_wait_parity", {addressOf(tma.empty, slot(iter)), free}, loc), expect});
        };
        auto produce = [&](const Expr& iter) {
            return ifThenElse(binary(BinaryOp::Eq, ctx_.tx(), intImm(0)), claim(iter), {}, loc);
        };
        auto consume = [&](const Expr& iter) {
            return mbarrierCall("mbarrier_wait_parity", {addressOf(tma.full, slot(iter)), parity(iter)}, loc);
        };
        auto release = [&](const Expr& iter) {
            return mbarrierCall("mbarrier_arrive", {addressOf(tma.empty, slot(iter))}, loc);
        };
        // With a gemm group in flight, iteration iter's wait (wait_group<1>) guarantees only the
        // wgmma of iter - 1 done: that stage is the one to release. After the loop the last
        // group is drained and the last stage released.
        auto releasePrevious = [&](const Expr& iter) {  // of iteration iter - 1, if any
            Expr any = simplify(binary(BinaryOp::Le, intImm(1), iter));
            Stmt s = release(simplify(iter - int64_t(1)));
            if (const int64_t* c = asConstInt(any)) return *c ? s : seq({}, loc);
            return ifThenElse(any, s, {}, loc);
        };
        auto releaseDone = [&](const Expr& iter) { return inFlight == m ? release(iter) : releasePrevious(iter); };
        auto drain = [&]() -> Stmt {
            if (inFlight == m) return seq({}, loc);
            const auto* gemm = static_cast<const ops::GemmOp*>(items[inFlight].stmt.as<TileOpStmt>()->op.get());
            return seq({tileOp(std::make_shared<ops::WgmmaDrainOp>(gemm->c()), loc), releasePrevious(count)}, loc);
        };
        if (ws) {
            // Producer: one elected thread of the producer warpgroup runs every iteration's
            // copies as soon as their version is free. Consumers: every iteration's other
            // statements, between the wait on full and the arrival on empty.
            VarPtr kp = makeVar(n->var->name, n->var->dtype), kc = makeVar(n->var->name, n->var->dtype);
            std::vector<Stmt> produced{claim(Expr(kp))}, consumed{consume(Expr(kc))};
            for (size_t i : byPos) {
                if (items[i].tma) produced.push_back(instance(i, Expr(kp), true));
                else consumed.push_back(instance(i, Expr(kc)));
            }
            consumed.push_back(releaseDone(Expr(kc)));
            WarpSpecialized w;
            w.producer = seq({comment(fmt::format("warp-specialised loop over {}: the producer's TMA loads", n->var->name), loc),
                              forLoop(kp, intImm(0), count, ForKind::Serial, seq(produced, loc), loc)});
            // The lets before the loop that the producer reads, declared again in its branch.
            const auto lets = producerLets(n, items, nullptr);
            for (auto it = lets.rbegin(); it != lets.rend(); ++it) w.producer = letStmt(it->var, it->value, w.producer, it->loc);
            w.init = initBarriers(tma, loc);
            w.full = tma.full;
            w.empty = tma.empty;
            std::string tiles;
            for (const BufferNode* b : shared)
                if (vers.count(b)) tiles += (tiles.empty() ? "" : ", ") + b->name;
            Stmt out = seq({comment(fmt::format("warp-specialised loop over {}: {} versions of {}; the consumers",
                                                n->var->name, tma.versions, tiles),
                                    loc),
                            forLoop(kc, intImm(0), count, ForKind::Serial, seq(consumed, loc), loc), drain()});
            for (auto it = flat.allocs.rbegin(); it != flat.allocs.rend(); ++it) {
                auto r = replaced.find((*it)->buffer.get());
                if (r != replaced.end()) w.tiles.push_back(r->second);  // declared before the split
                else out = allocate((*it)->buffer, out, (*it)->loc);
            }
            for (const BufferNode* b : shared)
                if (vers.count(b)) {
                    versioned_[b] = replaced[b];
                    if (std::find(w.tiles.begin(), w.tiles.end(), replaced[b]) == w.tiles.end()) w.tiles.push_back(replaced[b]);
                }
            ctx_.mbarriers.insert({tma.full.get(), tma.empty.get()});
            ctx_.mbarrierSynced.insert({tma.full.get(), tma.empty.get()});
            for (const auto& t : w.tiles) ctx_.mbarrierSynced.insert(t.get());
            ws_ = std::move(w);
            return out;
        }
        // With a gemm group in flight, step t releases the stage of iteration t - S - 1 after
        // its readers, which is the one its TMA loads (iteration t) take: they go last.
        std::vector<size_t> stepOrder;
        for (size_t i : byPos)
            if (inFlight == m || !items[i].tma) stepOrder.push_back(i);
        if (inFlight != m)
            for (size_t i : byPos)
                if (items[i].tma) stepOrder.push_back(i);
        // One step: the statements `present` runs (each with its guard, null for none).
        auto step = [&](const Expr& t, const std::vector<std::pair<size_t, Expr>>& present, bool commit = true) {
            std::vector<Stmt> out;
            int allows = INT_MAX;
            for (const auto& [i, g] : present) allows = std::min(allows, items[i].waitAllows);
            if (allows != INT_MAX) {
                out.push_back(evaluate(call("cp_async_wait_group", DType::I32, {intImm(allows)}), loc));
                out.push_back(barrier(loc));
            }
            Expr guard;
            std::vector<Stmt> pending;
            auto flush = [&] {
                if (pending.empty()) return;
                out.push_back(guard ? ifThenElse(guard, seq(pending), {}, loc) : seq(pending));
                pending.clear();
            };
            // The first TMA producer and the first and last TMA readers of this step, in order.
            size_t firstProducer = m, firstReader = m, lastReader = m;
            for (size_t i : stepOrder)
                if (std::any_of(present.begin(), present.end(), [&](const auto& p) { return p.first == i; })) {
                    if (items[i].tma && firstProducer == m) firstProducer = i;
                    if (items[i].tmaReader && firstReader == m) firstReader = i;
                    if (items[i].tmaReader) lastReader = i;
                }
            for (size_t i : stepOrder) {
                auto it = std::find_if(present.begin(), present.end(), [&](const auto& p) { return p.first == i; });
                if (it != present.end()) {
                    bool same = (!guard && !it->second) || (guard && it->second && equal(guard, it->second));
                    if (!same) flush();
                    guard = it->second;
                    Expr iter = simplify(t - int64_t(items[i].stage));
                    if (i == firstProducer) pending.push_back(produce(iter));
                    if (i == firstReader) pending.push_back(consume(iter));
                    pending.push_back(instance(i, iter));
                    if (i == lastReader) pending.push_back(releaseDone(iter));
                }
                if (i == commitAfter && commit) {
                    flush();
                    out.push_back(evaluate(call("cp_async_commit", DType::I32, {}), loc));
                }
            }
            flush();
            return seq(out, loc);
        };

        std::string names;
        for (const auto* b : shared)
            if (vers.count(b))
                names += fmt::format("{}{} x{}{}", names.empty() ? "" : ", ", replaced[b]->name, vers[b].versions,
                                     items[vers[b].writer].tma ? " (TMA)" : "");
        std::vector<Stmt> code;
        code.push_back(comment(fmt::format("pipelined loop over {}: {} stages{}{}; prologue", n->var->name, last + 1,
                                           names.empty() ? "" : ", versions: ", names),
                               loc));
        for (const auto& note : tma.notes) code.push_back(comment(note, loc));
        if (tma.full) code.push_back(initBarriers(tma, loc));
        for (int t = 0; t < last; ++t) {
            std::vector<std::pair<size_t, Expr>> present;
            for (size_t i = 0; i < m; ++i) {
                if (items[i].stage > t) continue;
                Expr g = simplify(intImm(t - items[i].stage) < count);
                if (const int64_t* c = asConstInt(g)) {
                    if (!*c) continue;
                    g = Expr();
                }
                present.push_back({i, g});
            }
            code.push_back(step(intImm(t), present));
        }
        code.push_back(comment("steady state", loc));
        VarPtr t = makeVar(n->var->name, n->var->dtype);
        std::vector<std::pair<size_t, Expr>> all;
        for (size_t i = 0; i < m; ++i) all.push_back({i, Expr()});
        code.push_back(
            forLoop(t, intImm(last), simplify(count - int64_t(last)), ForKind::Serial, step(Expr(t), all), loc));
        code.push_back(comment("epilogue", loc));
        for (int j = 0; j < last; ++j) {
            std::vector<std::pair<size_t, Expr>> present;
            for (size_t i = 0; i < m; ++i)
                if (items[i].stage > j) present.push_back({i, Expr()});
            if (present.empty()) break;
            // Steps before S ran in the prologue already (when n < S).
            Expr g = simplify(binary(BinaryOp::Le, intImm(last - j), count));
            // The last step commits nothing: no wait follows.
            Stmt s = step(simplify(count + int64_t(j)), present, j + 1 < last);
            if (const int64_t* c = asConstInt(g)) {
                if (*c) code.push_back(s);
            } else {
                code.push_back(ifThenElse(g, s, {}, loc));
            }
        }
        code.push_back(drain());
        Stmt out = seq(code, loc);
        for (auto it = flat.allocs.rbegin(); it != flat.allocs.rend(); ++it) {
            auto r = replaced.find((*it)->buffer.get());
            out = allocate(r != replaced.end() ? r->second : (*it)->buffer, out, (*it)->loc);
        }
        for (const auto& [b, nb] : replaced) versioned_[b] = nb;
        if (tma.full) {
            out = allocate(tma.full, allocate(tma.empty, out, loc), loc);
            ctx_.mbarriers.insert({tma.full.get(), tma.empty.get()});
            ctx_.mbarrierSynced.insert({tma.full.get(), tma.empty.get()});
            for (const auto& [b, v] : vers)
                if (items[v.writer].tma) ctx_.mbarrierSynced.insert(replaced[b].get());
        }
        return out;
    }

    std::optional<WarpSpecialized> ws_;

    // Why loop n cannot be warp-specialised (empty when it can): the producer warpgroup runs the
    // TMA copies on its own, so every producer must be a TMA load, and the consumers must never
    // wait at a block barrier while the producer still runs (it takes no part in them): nothing
    // before the loop or in its other statements may synchronise the block.
    std::string warpSpecializeIssue(const For* n, const std::vector<Item>& items, const Versions& vers, bool tmaLoads) const {
        if (!n->pipeline.order.empty() || !n->pipeline.stage.empty()) return "the loop has 'order'/'stage' lists";
        if (!ctx_.target.has(Feature::Setmaxnreg)) return "the target cannot move registers between warpgroups";
        if (ws_) return "the kernel has a warp-specialised loop already";
        auto top = topLevel_.find(n);
        if (top == topLevel_.end()) return "it runs inside another loop or a condition";
        if (!tmaLoads) return "none of its copies is a TMA load";
        if (ctx_.threads % 128 != 0) return fmt::format("its {} threads are not whole warpgroups", ctx_.threads);
        if (ctx_.threads + 128 > ctx_.target.maxThreadsPerBlock)
            return fmt::format("a producer warpgroup would pass the target's {} threads per block",
                               ctx_.target.maxThreadsPerBlock);
        std::set<const BufferNode*> tiles;
        for (const auto& [b, v] : vers) {
            if (items[v.writer].async && !items[v.writer].tma) return "a copy of the loop stays cp.async";
            if (items[v.writer].tma) tiles.insert(b);
        }
        for (const auto& it : items) {
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
        if (!top->second.clean) return "statements before the loop may synchronise the block";
        std::string issue;
        producerLets(n, items, &issue);
        if (!issue.empty()) return issue;
        return "";
    }

    // The lets around loop n that its warp-specialised producer reads (the trip count, the TMA
    // copies' positions, and what those lets read in turn), outermost first: the producer runs
    // in its own branch, outside the consumers' code that declares them, so it declares them
    // again. Pure values (block indices, sizes, parameters, arithmetic on them, global memory
    // the kernel does not write before the loop) can be computed twice; a value that reads
    // what only the consumers hold (a fragment, a local variable) or what may change cannot,
    // and then `issue` says so.
    std::vector<OuterLet> producerLets(const For* n, const std::vector<Item>& items, std::string* issue) const {
        std::vector<OuterLet> out;
        auto top = topLevel_.find(n);
        if (top == topLevel_.end()) return out;
        VarsUsed used;
        LoadedBuffers loads;
        used.visit(n->extent);
        loads.visit(n->extent);
        for (const auto& it : items)
            if (it.tma) {
                used.visit(it.stmt);
                loads.visit(it.stmt);
            }
        // The producer's own reads of memory (a position read from a buffer).
        for (const BufferNode* b : loads.buffers)
            if (std::string why = rereadIssue(b, top->second.writtenBefore); !why.empty() && issue && issue->empty())
                *issue = "the loop's trip count or its copies' positions read " + why;
        const auto& lets = top->second.lets;
        std::vector<bool> needed(lets.size(), false);
        for (size_t i = lets.size(); i-- > 0;) {
            if (!used.vars.count(lets[i].var.get())) continue;
            needed[i] = true;
            used.visit(lets[i].value);
            if (!lets[i].issue.empty() && issue && issue->empty())
                *issue = fmt::format("the producer needs '{}'{}, whose value reads {}", lets[i].var->name,
                                     lets[i].loc.valid() ? fmt::format(" (line {})", lets[i].loc.line) : std::string(),
                                     lets[i].issue);
        }
        for (size_t i = 0; i < lets.size(); ++i)
            if (needed[i]) out.push_back(lets[i]);
        return out;
    }

    // The gemm whose wgmma group may stay in flight past its step (wait_group<1>), m for none;
    // each gemm's choice goes into the decision log. The group reads its stages and writes its
    // accumulator until the next iteration's wait, so: the stages must be TMA tiles, whose
    // release the loop can delay by an iteration (cp.async copies of step t overwrite the
    // version step t - 1's gemm read right after the step's barrier: that would need one
    // version more, so those gemms wait for their group); nothing else in the loop may touch
    // the accumulator (flash attention's softmax reads one gemm's result and rescales the
    // other's); and wait_group counts groups, so one gemm per loop.
    size_t chooseGroupInFlight(const For* n, const std::vector<Item>& items, const Versions& vers, bool tmaLoads) {
        const size_t m = items.size();
        if (!ctx_.target.has(Feature::Wgmma)) return m;
        std::vector<size_t> gemms;
        for (size_t i = 0; i < m; ++i)
            for (const TileOp* op : items[i].fp.ops)
                if (dynamic_cast<const ops::GemmOp*>(op)) gemms.push_back(i);
        size_t chosen = m;
        // A statement of the loop as the reasons name it: the tile op, or its line.
        auto statement = [&](size_t i) {
            if (const auto* t = items[i].stmt.as<TileOpStmt>()) return "'" + t->op->str() + "'";
            const SourceLoc at = items[i].stmt->loc;
            return at.valid() ? fmt::format("the statement of line {}", at.line) : std::string("a statement");
        };
        for (size_t g : gemms) {
            const auto* t = items[g].stmt.as<TileOpStmt>();
            const auto* gemm = t ? dynamic_cast<const ops::GemmOp*>(t->op.get()) : nullptr;
            ops::GemmPlan plan;
            // Gemms that will not be wgmma have no group: their plan logs why.
            if (gemm && !ops::planWgmma(*gemm, ctx_, plan).empty()) continue;
            std::string why;
            if (!gemm) why = "it runs inside another statement of the loop";
            else if (!n->pipeline.order.empty() || !n->pipeline.stage.empty()) why = "the loop has 'order'/'stage' lists";
            else if (gemm->clearAccum()) why = "it clears its accumulator (clear_accum) while the last group writes it";
            // Operands: TMA stages (released after the wait that covers them), or tiles the loop
            // does not write (Q_s loaded before it).
            for (const Region* r : gemm ? std::vector{&gemm->a(), &gemm->b()} : std::vector<const Region*>{}) {
                if (!why.empty()) break;
                auto v = vers.find(r->buffer.get());
                if (v != vers.end() && tmaLoads && items[v->second.writer].tma) continue;
                if (v != vers.end() && items[v->second.writer].async)
                    why = fmt::format("'{}' comes by cp.async: the copies of step t overwrite the version step t - 1's "
                                      "gemm read as soon as the step starts (that would need one more version)",
                                      r->buffer->name);
                else if (v != vers.end())
                    why = fmt::format("'{}' is not a stage the loop's TMA loads fill", r->buffer->name);
                for (size_t i = 0; i < m && why.empty(); ++i)
                    if (i != g && items[i].fp.writes.count(r->buffer.get()))
                        why = fmt::format("{} in the loop writes its operand '{}', which a group in flight still "
                                          "reads",
                                          statement(i), r->buffer->name);
            }
            for (size_t i = 0; i < m && why.empty(); ++i)
                if (i != g && items[i].fp.touches(gemm->c().buffer.get()))
                    why = fmt::format("{} in the loop uses its accumulator '{}', which a group in flight still "
                                      "writes",
                                      statement(i), gemm->c().buffer->name);
            if (why.empty() && gemms.size() > 1)
                why = fmt::format("the loop has {} gemms and wait_group counts groups: each waits for its own",
                                  gemms.size());
            if (why.empty()) chosen = g;
            ctx_.decide(fmt::format("wgmma group of {}", gemm ? gemm->str() : std::string("a gemm")),
                        why.empty() ? "left in flight (wait_group<1>)" : "waited for in its step (wait_group<0>)",
                        "lowering",
                        why.empty() ? "the next iteration's wgmma overlaps it; the loop releases each TMA stage one "
                                      "iteration later, after the wait that covers its reader, and drains the last "
                                      "group after the loop"
                                    : why,
                        n->loc);
        }
        return chosen;
    }

    // The TMA side of one pipelined loop: its barrier arrays (null when no producer is TMA),
    // versions, the bytes one iteration's boxes bring, and a comment per copy left to cp.async.
    struct Tma {
        Buffer full, empty;
        int64_t versions = 0;
        int64_t bytes = 0;
        std::vector<std::string> notes;
    };

    Tma chooseTma(std::vector<Item>& items, const Versions& vers, const std::vector<const BufferNode*>& order,
                  SourceLoc loc) {
        Tma tma;
        if (!ctx_.target.has(Feature::Tma)) return tma;
        // One pair of barriers per version serves every TMA producer of the loop: they must
        // share their stage, versions and the stage of their readers (the default schedule).
        std::vector<std::pair<size_t, const BufferNode*>> candidates;
        std::vector<std::pair<const BufferNode*, std::string>> why;
        std::set<int> readerStages;
        for (const BufferNode* b : order) {
            if (!vers.count(b)) continue;
            const auto& v = vers.at(b);
            if (!items[v.writer].async) continue;
            const auto* copy = static_cast<const ops::CopyOp*>(items[v.writer].stmt.as<TileOpStmt>()->op.get());
            auto ann = annotated_.find(b);
            why.push_back({b, ops::tmaIssue(*copy, ctx_, ann == annotated_.end() ? std::nullopt
                                                                                  : std::optional(ann->second))});
            if (!why.back().second.empty()) continue;
            candidates.push_back({v.writer, b});
            for (size_t j = 0; j < items.size(); ++j)
                if (j != v.writer && items[j].fp.reads.count(b)) readerStages.insert(items[j].stage);
        }
        // One pair of barriers per version serves every TMA producer of the loop: they must
        // share their stage and versions, and their readers one stage (the default schedule).
        bool uniform = readerStages.size() <= 1;
        for (const auto& [writer, b] : candidates)
            uniform &= vers.at(b).versions == vers.at(candidates.front().second).versions &&
                       items[writer].stage == items[candidates.front().first].stage;
        for (auto& [b, reason] : why) {
            if (reason.empty() && !uniform)
                reason = "the loop's TMA copies or their readers run at different stages (one barrier pair per "
                         "version serves them all)";
            const size_t writer = vers.at(b).writer;
            const auto* copy = static_cast<const ops::CopyOp*>(items[writer].stmt.as<TileOpStmt>()->op.get());
            ctx_.copyDecisions.push_back({copy->str(), reason.empty() ? "tma" : "cp.async", reason});
            ctx_.decide(fmt::format("transport of {}", copy->str()), reason.empty() ? "TMA load" : "cp.async",
                        "lowering",
                        reason.empty() ? "a pipelined global-to-shared copy of a box TMA can move: one thread "
                                         "issues it, the stage's mbarrier counts its bytes"
                                       : "not TMA: " + reason,
                        loc);
            if (!reason.empty()) tma.notes.push_back(fmt::format("{}: cp.async, not TMA: {}", b->name, reason));
        }
        if (!uniform) candidates.clear();
        if (candidates.empty()) return tma;
        tma.versions = vers.at(candidates.front().second).versions;
        for (const auto& [writer, b] : candidates) {
            items[writer].tma = true;
            tma.bytes += ops::tmaBoxBytes(*static_cast<const ops::CopyOp*>(items[writer].stmt.as<TileOpStmt>()->op.get()));
            for (size_t j = 0; j < items.size(); ++j)
                if (j != writer && items[j].fp.reads.count(b)) items[j].tmaReader = true;
        }
        tma.full = makeBuffer(ctx_.freshName("full_bar"), DType::U64, MemScope::Shared, {intImm(tma.versions)});
        ctx_.reserveName(tma.full->name);
        tma.empty = makeBuffer(ctx_.freshName("empty_bar"), DType::U64, MemScope::Shared, {intImm(tma.versions)});
        ctx_.reserveName(tma.empty->name);
        return tma;
    }

    // Thread 0 initialises the barriers (full: its one arrival with the bytes; empty: every
    // thread's) and makes them visible to TMA; the block barrier publishes them. Inside another
    // loop a barrier first: threads of the last run may still arrive on them.
    Stmt initBarriers(const Tma& tma, SourceLoc loc) {
        VarPtr v = ctx_.freshVar("version");
        Stmt init = seq({mbarrierCall("mbarrier_init", {addressOf(tma.full, Expr(v)), intImm(1)}, loc),
                         mbarrierCall("mbarrier_init", {addressOf(tma.empty, Expr(v)), intImm(ctx_.threads)}, loc)});
        Stmt once = seq({forLoop(v, intImm(0), intImm(tma.versions), ForKind::Serial, init, loc),
                         mbarrierCall("fence_barrier_init", {}, loc)});
        std::vector<Stmt> out;
        if (depth_ > 0) out.push_back(barrier(loc));
        out.push_back(ifThenElse(binary(BinaryOp::Eq, ctx_.tx(), intImm(0)), once, {}, loc));
        out.push_back(barrier(loc));
        return seq(out, loc);
    }
};

} // namespace

namespace {

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

} // namespace

// A warp-specialised kernel: the barriers are initialised by all threads, then the producer
// warpgroup (threads T .. T + 127 past the T the rest of the lowering spreads work over) gives
// its registers away and one of its threads runs the producer loop, while the consumers take
// the registers and run the kernel's own code, the pipelined loop replaced by its consumer
// side. The producer threads then end: later block barriers wait only for threads that have
// not exited (PTX ISA, "bar", "exit").
Stmt splitWarps(const Stmt& body, const Pipeliner::WarpSpecialized& ws, LowerContext& ctx) {
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
    consumers = seq({evaluate(call("setmaxnreg_inc", DType::I32, {intImm(raised)}), loc), consumers});
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

Stmt pipelineLoops(const Stmt& body, LowerContext& ctx) {
    Pipeliner p(ctx, body);
    Stmt out = p.mutate(body);
    if (p.warpSpecialized()) out = splitWarps(out, *p.warpSpecialized(), ctx);
    return p.versioned().empty() ? out : AnnotationRetargeter(p.versioned()).mutate(out);
}

} // namespace tlc

// The pass list: Tile IR in, thread IR out.
#include "passes/Passes.h"

#include "ir/Printer.h"
#include "ir/Simplify.h"
#include "ir/TileOp.h"
#include "ir/Visitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <ostream>

namespace tlc {

using namespace ir;

namespace {

// Where a pass runs: the cpu passes turn block-level code into what a core runs fast (one
// thread per block); the others run on every target and ask the target for what they need.
enum class Runs { Everywhere, Cpu };

struct Pass {
    const char* name;
    Runs on;
    // The kernel, the lowering's services, and what stage inference carries between the passes
    // (and attempts) that take part in it: pipeline-loops and plan-shared-memory.
    std::function<bool(Kernel&, LowerContext&, StageInference&)> run;
};

bool runsOn(Runs on, const Target& t) { return on == Runs::Everywhere || t.backend == Backend::Cpu; }

// The pass list, in order.
const std::vector<Pass>& passList() {
    using R = Runs;
    static const std::vector<Pass> passes = {
        {"split-k", R::Everywhere, [](Kernel& k, LowerContext& ctx, StageInference&) { return splitK(k, ctx); }},
        {"persistent-tiles", R::Everywhere, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = persistentTiles(k, k.body, ctx); return true; }},
        {"forward-copies", R::Cpu, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = forwardCopies(k.body, ctx); return true; }},
        {"reuse-packed-b", R::Cpu, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = reusePackedB(k, k.body, ctx); return true; }},
        {"fuse-reductions", R::Cpu, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = fuseReductions(k.body, ctx); return true; }},
        {"prefetch-next-block", R::Cpu, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = prefetchNextBlock(k, k.body, ctx); return true; }},
        {"fuse-tile-loads", R::Cpu, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = fuseTileLoads(k.body, ctx); return true; }},
        {"fuse-tile-stores", R::Cpu, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = fuseTileStores(k.body, ctx); return true; }},
        {"read-tiles-in-place", R::Cpu, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = readTilesInPlace(k.body, ctx); return true; }},
        {"lower-thread-level", R::Everywhere, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = lowerThreadLevel(k, k.body, ctx); return true; }},
        {"serialize-threads", R::Cpu, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = serializeThreads(k, k.body, ctx); return true; }},
        {"hoist-im2col-rows", R::Everywhere, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = hoistIm2colRows(k.body, ctx); return true; }},
        {"pipeline-loops", R::Everywhere, [](Kernel& k, LowerContext& ctx, StageInference& s) { k.body = pipelineLoops(k.body, ctx, s); return true; }},
        {"infer-layouts", R::Everywhere, [](Kernel& k, LowerContext& ctx, StageInference&) { return inferLayouts(k, ctx); }},
        {"insert-barriers", R::Everywhere, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = insertBarriers(k.body, ctx); return true; }},
        {"lower-tile-ops", R::Everywhere, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = lowerTileOps(k.body, ctx); return true; }},
        {"drop-unused-buffers", R::Everywhere, [](Kernel& k, LowerContext&, StageInference&) { k.body = dropUnusedBuffers(k.body); return true; }},
        {"apply-shared-layouts", R::Everywhere, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = applySharedLayouts(k.body, ctx); return true; }},
        {"plan-shared-memory", R::Everywhere, [](Kernel& k, LowerContext& ctx, StageInference& s) { k.body = planSharedMemory(k, k.body, ctx, s); return true; }},
        {"persistent-grid", R::Everywhere, [](Kernel& k, LowerContext& ctx, StageInference&) { persistentGrid(k, ctx); return true; }},
        {"consumer-barriers", R::Everywhere, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = consumerBarriers(k.body, ctx); return true; }},
        {"batch-async-waits", R::Everywhere, [](Kernel& k, LowerContext&, StageInference&) { k.body = batchAsyncWaits(k.body); return true; }},
        {"simplify", R::Everywhere, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = simplify(k.body, ctx.bounds()); return true; }},
        {"hoist-invariants", R::Cpu, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = hoistInvariants(k.body, ctx); return true; }},
        {"interleave-rows", R::Cpu, [](Kernel& k, LowerContext& ctx, StageInference&) { k.body = interleaveRows(k.body, ctx); return true; }},
    };
    return passes;
}

// Compiler-made names must not capture the kernel's own.
class NameCollector : public IRVisitor {
public:
    explicit NameCollector(LowerContext& ctx) : ctx_(ctx) {}

protected:
    void visitVar(const Var* n) override { ctx_.reserveName(n->name); }
    void visitAllocate(const Allocate* n) override {
        ctx_.reserveName(n->buffer->name);
        IRVisitor::visitAllocate(n);
    }
    void visitLetStmt(const LetStmt* n) override {
        ctx_.reserveName(n->var->name);
        IRVisitor::visitLetStmt(n);
    }
    void visitFor(const For* n) override {
        ctx_.reserveName(n->var->name);
        IRVisitor::visitFor(n);
    }

private:
    LowerContext& ctx_;
};

// What the emitters cannot print: tile ops and tile-level loops left in the thread IR. Each is a
// compiler bug; it is reported at its statement (the nearest one with a location), like any
// error in the input, instead of as an internal error without a location while writing code.
class Unlowered : public IRVisitor {
public:
    Unlowered(DiagnosticEngine& diags, SourceLoc kernel) : diags_(diags), here_(kernel) {}
    bool found = false;

protected:
    void visitTileOpStmt(const TileOpStmt* n) override {
        report(n->loc, fmt::format("'{}'", n->op->str()));
    }
    void visitFor(const For* n) override {
        if (n->forKind == ForKind::Parallel || n->forKind == ForKind::Pipelined)
            return report(n->loc, fmt::format("this {} loop", forKindName(n->forKind)));
        AtLoc at(here_, n->loc);
        IRVisitor::visitFor(n);
    }
    void visitIfThenElse(const IfThenElse* n) override {
        AtLoc at(here_, n->loc);
        IRVisitor::visitIfThenElse(n);
    }
    void visitLetStmt(const LetStmt* n) override {
        AtLoc at(here_, n->loc);
        IRVisitor::visitLetStmt(n);
    }
    void visitAllocate(const Allocate* n) override {
        AtLoc at(here_, n->loc);
        IRVisitor::visitAllocate(n);
    }

private:
    DiagnosticEngine& diags_;
    SourceLoc here_;
    void report(SourceLoc loc, const std::string& what) {
        found = true;
        diags_.report(DiagId::err_not_lowerable, SourceRange(loc.valid() ? loc : here_), what,
                      "no lowering took it over (a compiler bug: please report it with this kernel)");
    }
};

int64_t loweredThreads(const Kernel& k, const Target& target) { return target.backend == Backend::Cpu ? 1 : k.threads; }

} // namespace

const std::vector<std::string>& passNames() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const auto& p : passList()) n.push_back(p.name);
        return n;
    }();
    return names;
}

bool lowerKernel(Kernel& kernel, const Target& target, DiagnosticEngine& diags, const PassOptions& options,
                 std::ostream& dumps) {
    // The emitters have no packed 4-bit global tensors yet: refused at the kernel, with a way out,
    // on every target (sema takes them: the language has the types).
    bool packed = false;
    for (const KernelParam& p : kernel.params)
        if (p.kind == KernelParam::Kind::Tensor && dtypeBits(p.dtype) < 8) {
            diags.report(DiagId::err_tensor_packed_dtype, SourceRange(kernel.loc), p.name, dtypeName(p.dtype));
            packed = true;
        }
    if (packed) return false;
    unsigned errorsBefore = diags.errorCount();
    struct MergeRepeats {
        DiagnosticEngine& d;
        explicit MergeRepeats(DiagnosticEngine& e) : d(e) { d.setMergeRepeats(true); }
        ~MergeRepeats() { d.setMergeRepeats(false); }
    } merge(diags);
    // Stage inference chooses from the shared memory it can plan before lowering; the
    // compiler's scratch buffers come later. When plan-shared-memory finds the pool too large
    // with an inferred loop's versions live at its peak, the kernel is lowered again from its
    // Tile IR with one stage less for that loop (repeated diagnostics merge).
    const Kernel tileLevel = kernel;
    StageInference stages;
    for (;;) {
        stages.chosen.clear();
        stages.fewer.clear();
        LowerContext ctx(target, loweredThreads(kernel, target), diags);
        if (kernel.threadIndex) ctx.threadIndex = kernel.threadIndex;
        ctx.generalShapes = kernel.generalShapes;
        ctx.clusterAsked = kernel.cluster;
        ctx.splitK = kernel.splitK;
        ctx.gridExtents = kernel.gridExtents;
        ctx.blockVars = kernel.blockVars;
        ctx.decisionLog = &kernel.decisions;
        const auto& logged = kernel.decisions.entries();
        ctx.threadsInferred =
            std::any_of(logged.begin(), logged.end(), [](const Decision& d) { return d.subject == "threads"; });
        for (const auto& p : kernel.params) ctx.reserveName(p.name);
        NameCollector(ctx).visit(kernel.body);
        bool ok = true;
        for (const auto& pass : passList()) {
            auto start = std::chrono::steady_clock::now();
            // A pass that does not run on the target leaves the kernel as it is (--print-after
            // still shows it there).
            if (runsOn(pass.on, target)) ok = pass.run(kernel, ctx, stages) && diags.errorCount() == errorsBefore;
            double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
            if (options.timePasses) dumps << fmt::format("// {:<20} {:8.3f} ms  ({})\n", pass.name, ms, kernel.name);
            bool print = options.printAfterAll ||
                         std::find(options.printAfter.begin(), options.printAfter.end(), pass.name) != options.printAfter.end();
            if (print) dumps << fmt::format("// ---- {} after {} ----\n", kernel.name, pass.name) << printKernel(kernel);
            if (!ok || !stages.fewer.empty()) break;
        }
        if (!stages.fewer.empty() && diags.errorCount() == errorsBefore) {
            stages.caps = stages.chosen;
            for (int i : stages.fewer) stages.caps[size_t(i)] = stages.chosen[size_t(i)] - 1;
            kernel = tileLevel;
            continue;
        }
        if (!ok) return false;
        Unlowered unlowered(diags, kernel.loc);
        unlowered.visit(kernel.body);
        if (unlowered.found) return false;
        kernel.threads = static_cast<int>(ctx.threads + ctx.producerThreads);
        kernel.threadIndex = ctx.threadIndex;
        kernel.launchChecks = ctx.launchChecks;
        kernel.tensorMaps = ctx.tensorMaps;
        kernel.producerThreads = static_cast<int>(ctx.producerThreads);
        pipeline::noteClusterUnused(ctx, kernel.loc);
        kernel.clusterSize = static_cast<int>(ctx.clusterSize);
        kernel.clusterDim = ctx.clusterDim;
        kernel.pipelines = ctx.pipelines;
        for (auto& p : kernel.pipelines)
            if (p.warpSpecialised) p.producerThreads = kernel.producerThreads;
        return true;
    }
}

bool inferLayoutFacts(Kernel& kernel, const Target& target, DiagnosticEngine& diags, LayoutFacts& facts) {
    LowerContext ctx(target, loweredThreads(kernel, target), diags);
    if (kernel.threadIndex) ctx.threadIndex = kernel.threadIndex;
    ctx.generalShapes = kernel.generalShapes;
    if (!inferLayouts(kernel, ctx)) return false;
    // In program order of the fragments' declarations.
    class Order : public IRVisitor {
    public:
        std::vector<Buffer> fragments, shared;

    protected:
        void visitAllocate(const Allocate* n) override {
            if (n->buffer->scope == MemScope::Fragment) fragments.push_back(n->buffer);
            if (n->buffer->scope == MemScope::Shared) shared.push_back(n->buffer);
            IRVisitor::visitAllocate(n);
        }
    } order;
    order.visit(kernel.body);
    facts.threads = ctx.threads;
    for (const auto& b : order.fragments) facts.fragments.push_back({b, ctx.layoutOf(b)});
    facts.allShared = order.shared;
    for (const auto& b : order.shared)
        if (auto it = ctx.sharedLayouts.find(b.get()); it != ctx.sharedLayouts.end()) facts.shared.push_back({b, it->second});
    facts.gemmPlans = ctx.gemmPlans;
    facts.accessCosts = ctx.sharedAccessCosts;
    // How pipelined copies from global to shared memory move (targets with TMA): the software
    // pipeline decides, so it runs here on a scratch context.
    LowerContext pipelining(target, loweredThreads(kernel, target), diags);
    if (kernel.threadIndex) pipelining.threadIndex = kernel.threadIndex;
    pipelining.generalShapes = kernel.generalShapes;
    NameCollector(pipelining).visit(kernel.body);
    StageInference stages;
    pipelineLoops(kernel.body, pipelining, stages);
    facts.copies = pipelining.copyDecisions;
    return true;
}

std::string describeLayouts(Kernel& kernel, const Target& target, DiagnosticEngine& diags) {
    LayoutFacts facts;
    if (!inferLayoutFacts(kernel, target, diags, facts)) return {};
    std::string out = fmt::format("kernel {} ({} thread{} on {}):\n", kernel.name, facts.threads,
                                  facts.threads == 1 ? "" : "s", target.name);
    for (const auto& [b, f] : facts.fragments) out += fmt::format("  {}: {}\n", b->name, f.str());
    for (const auto& [b, l] : facts.shared)
        out += fmt::format("  {} (shared): {}, for {}\n", b->name, l.str(), l.reason);
    for (const auto& plan : facts.gemmPlans) out += "  " + plan + "\n";
    for (const auto& d : facts.copies)
        out += fmt::format("  {}: {}{}\n", d.copy, d.form == "tma" ? "TMA load" : "cp.async",
                           d.reason.empty() ? "" : ", not TMA: " + d.reason);
    return out;
}

} // namespace tlc

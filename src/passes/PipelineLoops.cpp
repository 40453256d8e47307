// The software pipeline (docs/lowering.md, pass "pipeline-loops"). Each `for k in pipelined(n,
// stages = s)`, inner loops first, becomes what the target allows:
//
//   - on targets with cp.async, a modulo schedule (pipeline/ModuloSchedule.cpp): the copies from
//     global into shared memory that later stages read run ahead, asynchronously, into versions
//     of their tiles (pipeline/Versioning.cpp); on targets with TMA the copies that qualify are
//     TMA loads ordered by mbarriers (pipeline/Tma.cpp);
//   - on targets with setmaxnreg, for a loop that suits it, a warp-specialised schedule: a
//     producer warpgroup of its own issues the TMA loads (pipeline/WarpSpecialize.cpp);
//   - on GPUs without cp.async, the next iteration's tiles loaded through registers while this
//     one computes (pipeline/RegisterPrefetch.cpp);
//   - elsewhere, and for loops none of these can take, the loop as it is (lower-tile-ops makes it
//     a plain loop).
//
// The order and stage lists are checked on every target. pipeline/LoopPlan.h lists the steps that
// plan a loop for its schedule.
#include "passes/Passes.h"
#include "passes/pipeline/LoopPlan.h"

#include "ir/Printer.h"

#include <fmt/format.h>

namespace tlc {

using namespace ir;
using namespace pipeline;

pipeline::PipelinedKernel::PipelinedKernel(const Stmt& kernelBody, const Var* tileVar)
    : body(kernelBody), accesses(countAccesses(kernelBody)), annotated(annotatedLayouts(kernelBody)),
      topLevel(topLevelLoops(kernelBody, tileVar)) {}

namespace {

// The loop's schedule as the kernel report draws it (ir::PipelineSummary): the items of one
// steady-state step in order, with their stages and who issues them.
// (A warp-specialised loop's producer threads are known once the kernel is split: lowerKernel
// fills them in.)
PipelineSummary summarize(const LoopPlan& plan, std::string schedule, int stages, bool warpSpecialised) {
    PipelineSummary out;
    out.loop = loopSubject(plan.loop);
    out.loc = plan.loop->loc;
    out.schedule = std::move(schedule);
    out.stages = stages;
    out.tmaBytes = plan.tma.used() ? plan.tma.bytes : 0;
    out.mbarriers = plan.tma.used();
    out.warpSpecialised = warpSpecialised;
    std::vector<size_t> order = plan.byPos;
    if (order.size() != plan.items.size()) {
        order.clear();
        for (size_t i = 0; i < plan.items.size(); ++i) order.push_back(i);
    }
    for (size_t i : order) {
        const Item& item = plan.items[i];
        PipelineSummary::Step step;
        step.stage = item.stage;
        step.async = item.async;
        step.tma = item.tma;
        step.producer = warpSpecialised && item.tma;
        step.loc = item.stmt->loc;
        if (const auto* t = item.stmt.as<TileOpStmt>()) {
            step.text = t->op->str();
            step.kind = t->op->name();
        } else {
            step.kind = "other";
            std::string text = printStmt(item.stmt);
            if (size_t nl = text.find('\n'); nl != std::string::npos) text = text.substr(0, nl) + " ...";
            step.text = text;
        }
        out.steps.push_back(std::move(step));
    }
    for (const BufferNode* b : plan.shared)
        if (auto it = plan.versions.find(b); it != plan.versions.end()) out.versions.push_back({b->name, it->second.count});
    if (plan.inFlight < plan.items.size())
        if (const auto* t = plan.items[plan.inFlight].stmt.as<TileOpStmt>()) out.inFlight = t->op->str();
    return out;
}

class Pipeliner : public IRMutator {
public:
    Pipeliner(LowerContext& ctx, StageInference& stages, const Stmt& body) : ctx_(ctx), stages_(stages), kernel_(body, ctx.persistentTile.get()) {}
    const PipelinedKernel& kernel() const { return kernel_; }

protected:
    Stmt mutateFor(const For* n, const Stmt& self) override {
        ++depth_;
        Stmt body = mutate(n->body);  // inner loops first
        --depth_;
        if (n->forKind == ForKind::Pipelined) {
            if (Stmt s = pipelineLoop(n)) return s;
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
        auto it = kernel_.versioned.find(n->buffer.get());
        Buffer b = it != kernel_.versioned.end() ? it->second : n->buffer;
        if (body.same(n->body) && b == n->buffer) return self;
        return allocate(b, body, n->loc, n->init);
    }

private:
    LowerContext& ctx_;
    StageInference& stages_;
    PipelinedKernel kernel_;
    int depth_ = 0;  // loops around the one being pipelined

    // The loop rewritten by the schedule it gets; null where it stays as it is.
    Stmt pipelineLoop(const For* n) {
        FlatBody flat;
        if (!flattenBody(n->body, flat)) return {};
        const size_t m = flat.stmts.size();
        const PipelineInfo& info = n->pipeline;
        if (!checkLists(n, m, ctx_)) return {};
        LoopPlan plan = analyseLoop(n, std::move(flat), depth_);
        // stages = 0 or 1 (IR building makes both 1): TileLang's "no pipelining".
        if (info.stages == 1) {
            if (m > 0)
                ctx_.decide(loopSubject(n), "not pipelined", "stages = 0 or 1",
                            "a plain loop: each iteration's copies complete before the statements that read them",
                            n->loc);
            return {};
        }
        // A general variant (issue 45) moves global memory an element at a time, which cp.async
        // (16-byte copies here) cannot: its loops are scheduled as on a target without it.
        const bool cpAsync = ctx_.target.has(Feature::CpAsync) && !ctx_.generalShapes;
        // GPUs without cp.async (CDNA) prefetch through registers where they can.
        std::string noPrefetch;
        if (!cpAsync && ctx_.target.backend != Backend::Cpu && m > 0 && info.stage.empty() && info.order.empty() &&
            !containsLoop(n->body, ForKind::Pipelined)) {
            if (Stmt s = prefetchThroughRegisters(plan, kernel_, ctx_, noPrefetch)) {
                ctx_.pipelines.push_back(summarize(plan, "register prefetch: the next iteration's tiles are "
                                                         "loaded into registers while this one computes", 2, false));
                return s;
            }
        }
        if (!cpAsync && m > 0)
            ctx_.decide(loopSubject(n), "not pipelined", "lowering",
                        fmt::format("{}{}: the loop runs its iterations in order",
                                    ctx_.generalShapes ? "the general variant moves global memory an element at "
                                                         "a time, which cp.async cannot"
                                                       : "target '" + ctx_.target.name + "' has no cp_async",
                                    noPrefetch.empty() ? "" : " and no prefetch through registers: " + noPrefetch),
                        n->loc);
        // Where the loop is not pipelined, an author's stage list is still checked: whether a
        // schedule is valid is the language's question, the same on every target.
        const bool checkOnly = !cpAsync || m == 0 || containsLoop(n->body, ForKind::Pipelined);
        if (checkOnly && info.stage.empty()) return {};
        if (!countsFromZero(n)) return {};
        if (!assignStages(plan, kernel_, stages_, ctx_)) return {};
        if (!checkOnly) planOverlap(plan, kernel_, ctx_);
        if (!checkUnversionedBuffers(plan, checkOnly, ctx_) || !planVersions(plan, kernel_, checkOnly, ctx_))
            return {};
        if (checkOnly) return {};
        equalizeOverlapVersions(plan);
        versionBuffers(plan);
        chooseTma(plan, kernel_, ctx_);
        // The gemm overlap is a form of the prologue/steady-state schedule only.
        plan.warpSpecialize = !plan.overlap.used() && chooseWarpSpecialization(plan, kernel_, ctx_);
        if (plan.warpSpecialize) planCarry(plan, kernel_, ctx_);
        plan.inFlight = chooseGroupInFlight(plan, kernel_, ctx_);
        chooseUnroll(plan, kernel_, ctx_);
        deepenPipeline(plan, kernel_, stages_, ctx_);
        settleUnroll(plan, kernel_, stages_, ctx_);
        plan.pingPong = choosePingPong(plan, kernel_, ctx_);
        planCluster(plan, kernel_, ctx_);
        makeTmaBuffers(plan, ctx_);
        if (plan.warpSpecialize) {
            Stmt out = emitWarpSpecialized(plan, kernel_, ctx_);
            ctx_.pipelines.push_back(summarize(plan, "warp-specialised: a producer warpgroup issues the TMA loads, "
                                                     "the consumer warpgroups compute; full/empty mbarriers order the versions",
                                               plan.last + 1, true));
            return out;
        }
        ctx_.pipelines.push_back(summarize(plan, plan.tma.used() ? "modulo schedule: TMA loads ordered by full/empty "
                                                                    "mbarriers, other copies cp.async"
                                                                  : "modulo schedule: cp.async copies run ahead into "
                                                                    "versions, cp.async.wait_group + barrier before readers",
                                           plan.last + 1, false));
        return emitModuloSchedule(plan, kernel_, ctx_);
    }
};

} // namespace

Stmt pipelineLoops(const Stmt& body, LowerContext& ctx, StageInference& stages) {
    Pipeliner p(ctx, stages, body);
    Stmt out = p.mutate(body);
    const PipelinedKernel& kernel = p.kernel();
    if (kernel.warpSpecialized) out = splitWarps(out, *kernel.warpSpecialized, ctx);
    return retargetAnnotations(out, kernel.versioned);
}

} // namespace tlc

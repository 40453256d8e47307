// Pipeline deepening (docs/lowering.md, "Pipeline depth"). A loop of gemms fed by the pipeline's
// loads runs at the tensor cores' pace only when its loads arrive in time: with the latency L of
// a load (the profile's `load_latency_ns`) and the bytes the tensor cores consume per ns at
// their peak (rate = peak per SM x the loop's bytes per flop), Little's law asks for rate x L
// bytes in flight per SM. A stage count that keeps fewer cannot feed the tensor cores however
// well the rest is scheduled (TileLang's 128x128x32 gemm tiles with 3 stages keep 32 KB in flight
// on an H200, where 91 KB are needed), so the loop gets more stages where shared memory has room.
#include "passes/pipeline/Depth.h"
#include "passes/pipeline/LoopPlan.h"

#include "ir/Simplify.h"
#include "ops/gemm/Gemm.h"
#include "passes/SharedLiveness.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tlc {

namespace {

// "94 KB": the model's sizes in messages, rounded (it is an estimate).
std::string kb(double bytes) {
    return bytes >= 1024 ? fmt::format("{:.0f} KB", bytes / 1024) : fmt::format("{:.0f} bytes", bytes);
}

// A pool's size, exact ("65600 bytes" is over a 64 KB limit).
std::string exactKb(int64_t bytes) {
    return bytes % 1024 == 0 ? fmt::format("{} KB", bytes / 1024) : fmt::format("{} bytes", bytes);
}

} // namespace

double bytesToHide(const DepthModel& m, const Target& t) {
    if (t.loadLatencyNs <= 0 || m.flops <= 0 || m.stageBytes <= 0 || t.smCount <= 0) return 0;
    double flopsPerNs = t.peakFor(m.type) * 1e3 / t.smCount;  // one SM at peak: TFLOP/s = 1e3 flop/ns
    return flopsPerNs * double(m.stageBytes) / m.flops * t.loadLatencyNs;
}

int64_t blocksPerSM(const DepthModel& m, int stages, int threads, const Target& t) {
    if (m.warpSpecialized) return 1;
    int64_t blocks = std::min<int64_t>(t.maxBlocksPerSM, t.maxThreadsPerSM / std::max(threads, 1));
    int64_t pool = m.planned ? m.planned(stages) : 0;
    if (pool > 0) blocks = std::min<int64_t>(blocks, t.sharedMemPerSM / pool);
    const int64_t registers = (m.fragmentBytes / 4 + threads - 1) / std::max(threads, 1) + 32;
    if (t.registersPerSM > 0) blocks = std::min<int64_t>(blocks, t.registersPerSM / (int64_t(threads) * registers));
    return std::max<int64_t>(blocks, 1);
}

int chooseDepth(const DepthModel& m, const std::string& subject, int index, bool pinned,
                const StageInference& inference, LowerContext& ctx, SourceLoc loc) {
    const Target& t = ctx.target;
    const double need = bytesToHide(m, t);
    // A loop unrolled by U holds two groups of U stages (one in flight, one being issued):
    // s - U stages' loads are on their way (s - 1 without unrolling).
    auto inFlight = [&](int s) {
        return double(blocksPerSM(m, s, ctx.threads, t) * std::max(s - m.unroll, 0) * m.stageBytes);
    };
    int most = kMaxDeepStages;
    if (m.trips && *m.trips < most) most = std::max<int>(int(*m.trips), m.written);
    if (index >= 0 && size_t(index) < inference.caps.size()) most = std::min(most, inference.caps[size_t(index)]);
    // The model's choice: the fewest stages that reach `need`, else the most in flight.
    int model = m.written;
    double best = inFlight(m.written);
    int stopped = m.written + 1;  // the first count not taken
    for (int s = m.written + 1; s <= most && best < need; ++s, ++stopped) {
        if (m.planned(s) > t.sharedMemPerBlock) break;
        if (inFlight(s) > best) {
            best = inFlight(s);
            model = s;
        }
    }
    const int chosen = pinned ? m.written : model;

    auto keeps = [&](int s) {
        int64_t blocks = blocksPerSM(m, s, ctx.threads, t);
        std::string times = blocks > 1 ? fmt::format("{} blocks x ", blocks) : "";
        return fmt::format("{} stages keep {}{} x {} = {} in flight", s, times, std::max(s - m.unroll, 0),
                           kb(double(m.stageBytes)),
                           kb(inFlight(s)));
    };
    std::string type = m.type ? std::string(dtypeName(*m.type)) : "f32";
    std::string reason = fmt::format(
        "one iteration loads {} ({}) for {:.2f} MFLOP of {} gemm; at the {} peak ({:.1f} TFLOP/s an SM) that is {:.0f} "
        "bytes per ns, so hiding a load's {:.0f} ns (load_latency_ns of target '{}') takes {} in flight per SM; {}",
        kb(double(m.stageBytes)), m.tiles, m.flops / 1e6, type, type, t.peakFor(m.type) / t.smCount, need / t.loadLatencyNs,
        t.loadLatencyNs, t.name, kb(need),
        m.warpSpecialized ? "one block per SM (warp-specialised)"
                          : std::string("blocks per SM as threads, registers and shared memory allow"));
    reason += fmt::format(": {}", keeps(m.written));
    if (model > m.written)
        reason += fmt::format(", {} in {} of shared memory", keeps(model), exactKb(m.planned(model)));
    // Why not deeper, where the model's choice falls short.
    if (inFlight(model) < need) {
        auto refused = inference.refusedBytes.find(index);
        if (stopped > most && most < kMaxDeepStages && refused != inference.refusedBytes.end())
            reason += fmt::format("; {} stages would need {} as planned with the compiler's scratch buffers", most + 1,
                                  exactKb(refused->second));
        else if (stopped > most && m.trips && *m.trips <= most)
            reason += fmt::format("; the loop runs at most {} iterations", *m.trips);
        else if (stopped > most)
            reason += fmt::format("; {} stages is the most deepened", kMaxDeepStages);
        else
            reason += fmt::format("; {} stages would need {} of shared memory, more than the {} per block", stopped,
                                  exactKb(m.planned(stopped)), exactKb(t.sharedMemPerBlock));
    }
    if (pinned && model > m.written) reason += fmt::format("; 'deepen = false' keeps {}", m.written);
    std::string value = chosen > m.written ? fmt::format("{} stages, deepened from {}", chosen, m.written)
                                           : fmt::format("{} stages, kept", chosen);
    ctx.decide("pipeline depth of " + subject, value, pinned ? "lowering (deepen = false)" : "lowering", reason, loc);
    return chosen;
}

namespace pipeline {

using namespace ir;

// The most iterations a loop of `extent` runs, where the simplifier can bound it, also for a
// split's `min(n, start + c) - start` (pipelined(start, min(n, start + c))): c.
static std::optional<int64_t> mostTrips(const Expr& extent) {
    if (auto b = boundsOf(extent)) return b->hi;
    const auto* e = extent.as<Binary>();
    const auto* m = e && e->op == BinaryOp::Sub ? e->a.as<Binary>() : nullptr;
    if (!m || m->op != BinaryOp::Min) return std::nullopt;
    for (const Expr& bound : {m->a, m->b}) {
        const auto* sum = bound.as<Binary>();
        const int64_t* c = sum && sum->op == BinaryOp::Add ? asConstInt(sum->b) : nullptr;
        if (c && equal(sum->a, e->b)) return *c;
    }
    return std::nullopt;
}

// The loop's depth model; nothing where the model does not speak for the loop: its schedule is
// the author's (order/stage lists), it loads nothing asynchronously, or it does other work than
// gemms (flash attention's softmax: its pace is not the tensor cores', and not known here).
int64_t fragmentBytes(const ir::Stmt& body) {
    class Fragments : public IRVisitor {
    public:
        int64_t bytes = 0;

    protected:
        void visitAllocate(const Allocate* n) override {
            std::vector<int64_t> shape;
            if (n->buffer->scope == MemScope::Fragment && constantShape(n->buffer, shape)) {
                int64_t elements = 1;
                for (int64_t e : shape) elements *= e;
                bytes += elements * dtypeBytes(n->buffer->dtype);
            }
            IRVisitor::visitAllocate(n);
        }
    } fragments;
    fragments.visit(body);
    return fragments.bytes;
}

// The versions of the shared tiles the loops pipelined before gave them.
static std::map<const BufferNode*, int> versionsPipelined(const PipelinedKernel& kernel) {
    std::map<const BufferNode*, int> versions;
    for (const auto& [b, nb] : kernel.versioned)
        if (const int64_t* v = asConstInt(nb->shape[0])) versions[b] = int(*v);
    return versions;
}

std::optional<DepthModel> depthModel(const LoopPlan& plan, const PipelinedKernel& kernel) {
    const PipelineInfo& info = plan.loop->pipeline;
    if (!info.order.empty() || !info.stage.empty()) return std::nullopt;
    DepthModel m;
    std::set<size_t> producers;
    for (const BufferNode* b : plan.shared) {
        auto v = plan.versions.find(b);
        if (v == plan.versions.end() || !plan.items[v->second.writer].async) continue;
        producers.insert(v->second.writer);
        m.stageBytes += tileBytes(producerTile(plan.items[v->second.writer]));
        m.tiles += (m.tiles.empty() ? "" : ", ") + b->name;
    }
    for (size_t i = 0; i < plan.items.size(); ++i) {
        if (producers.count(i)) continue;
        const auto* t = plan.items[i].stmt.as<TileOpStmt>();
        const auto* gemm = t ? dynamic_cast<const ops::GemmOp*>(t->op.get()) : nullptr;
        if (!gemm) return std::nullopt;
        // m n k, whichever operand is transposed.
        m.flops += 2.0 * std::sqrt(double(gemm->a().elements()) * double(gemm->b().elements()) *
                                   double(gemm->c().elements()));
        m.type = gemm->a().buffer->dtype;
    }
    if (m.stageBytes == 0 || m.flops == 0) return std::nullopt;
    m.warpSpecialized = plan.warpSpecialize;
    m.unroll = plan.unroll;
    m.fragmentBytes = fragmentBytes(kernel.body);
    m.written = plan.last + 1;
    m.trips = mostTrips(plan.loop->extent);
    // The pool as plan-shared-memory would plan it, the loops pipelined before with theirs.
    std::map<const BufferNode*, int> versions = versionsPipelined(kernel);
    std::map<const BufferNode*, int> tiles;  // each with its versions beyond one per stage
    for (const auto& [b, v] : plan.versions) tiles[b] = v.extra;
    m.planned = [&body = kernel.body, versions, tiles](int s) mutable {
        for (const auto& [b, extra] : tiles) versions[b] = s + extra;
        return plannedSharedBytes(body, versions, true);
    };
    return m;
}

int64_t blocksPerSMAsPlanned(const LoopPlan& plan, const PipelinedKernel& kernel, const LowerContext& ctx) {
    DepthModel m;
    m.fragmentBytes = fragmentBytes(kernel.body);
    std::map<const BufferNode*, int> versions = versionsPipelined(kernel);
    for (const auto& [b, v] : plan.versions) versions[b] = int(v.count);
    m.planned = [&](int) { return plannedSharedBytes(kernel.body, versions, true); };
    return blocksPerSM(m, plan.last + 1, int(ctx.threads), ctx.target);
}

void deepenPipeline(LoopPlan& plan, const PipelinedKernel& kernel, StageInference& inference, LowerContext& ctx) {
    if (ctx.target.loadLatencyNs <= 0) return;
    std::optional<DepthModel> m = depthModel(plan, kernel);
    if (!m) return;
    const bool pinned = plan.loop->pipeline.deepen == 0;
    // A deepened loop takes part in lowering's retry with fewer stages as an inferred one does:
    // the same number where its stages are inferred, else a number of its own (whether it
    // gets one depends on nothing a retry changes, so the numbers stay the same).
    int index = plan.inferred;
    if (index < 0 && !pinned) {
        index = int(inference.chosen.size());
        inference.chosen.push_back(m->written);
    }
    plan.inferred = index;
    restage(plan, chooseDepth(*m, loopSubject(plan.loop), index, pinned, inference, ctx, plan.loop->loc), pinned,
            inference);
}

void restage(LoopPlan& plan, int stages, bool pinned, StageInference& inference) {
    int index = plan.inferred;
    if (index < 0 && !pinned) {
        index = int(inference.chosen.size());
        inference.chosen.push_back(plan.last + 1);
    }
    if (index >= 0) inference.chosen[size_t(index)] = stages;
    if (stages == plan.last + 1) return;
    // Producers stay at stage 0, the rest moves to the new last stage, and every versioned tile
    // (written at 0, read at the last stage) gets one version per stage.
    const int oldLast = plan.last;
    plan.last = stages - 1;
    plan.inferred = index;
    for (Item& it : plan.items)
        if (it.stage == oldLast) it.stage = plan.last;
    for (auto& [b, v] : plan.versions) v.count += plan.last - oldLast;
    versionBuffers(plan);
    if (plan.tma.used()) plan.tma.versions = stages;
}

} // namespace pipeline

} // namespace tlc

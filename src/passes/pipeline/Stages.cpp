// A pipelined loop's stages: the author's `order`/`stage` lists checked, or stages inferred
// (producers at stage 0, the rest at the last), their count from the shared-memory pool.
#include "passes/pipeline/Stages.h"
#include "passes/pipeline/LoopPlan.h"
#include "passes/SharedLiveness.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>

namespace tlc {

namespace {

std::string kb(int64_t bytes) {
    return bytes % 1024 == 0 ? fmt::format("{} KB", bytes / 1024) : fmt::format("{} bytes", bytes);
}

std::string joinInts(const std::vector<int>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s;
}

// What the pool holds besides `stages` versions of the producers' buffers, for messages.
std::string others(const StageBudget& b, int stages) {
    int64_t rest = b.planned(stages) - int64_t(stages) * b.perStage;
    return rest > 0 ? fmt::format(" with the kernel's other {} of shared memory", kb(rest)) : "";
}

} // namespace

int inferStages(const StageBudget& b, StageInference& inference, LowerContext& ctx, SourceLoc loc) {
    int64_t limit = ctx.target.sharedMemPerBlock;
    size_t index = inference.chosen.size();
    int most = kMaxInferredStages;
    if (index < inference.caps.size()) most = std::min(most, std::max(inference.caps[index], 1));
    int stages = 1;
    for (int s = most; s > 1; --s)
        if (b.planned(s) <= limit) {
            stages = s;
            break;
        }
    // One stage more: refused by plan-shared-memory with the compiler's scratch buffers, or
    // by the estimate here. (A cap of kMaxInferredStages or more comes from a deepened count
    // refused, pipeline/Depth.cpp, which says so itself.)
    auto refused = inference.refusedBytes.find(int(index));
    bool lowered = refused != inference.refusedBytes.end() && stages + 1 > most && most < kMaxInferredStages;
    int64_t next = lowered ? refused->second : b.planned(stages + 1);
    std::string nextNeeds = lowered ? fmt::format("{} as planned with the compiler's scratch buffers", kb(next)) : kb(next);
    std::string reason =
        stages > 1
            ? fmt::format("{} x {} ({}){} is {}, within the {} per block of target '{}'{}", stages, kb(b.perStage),
                          b.buffers, others(b, stages), kb(b.planned(stages)), kb(limit), ctx.target.name,
                          stages == kMaxInferredStages ? fmt::format("; {} is the most inferred", kMaxInferredStages)
                                                       : fmt::format("; {} stages would need {}", stages + 1, nextNeeds))
            : fmt::format("no pipeline: 2 stages of {} ({}){} need {}, more than the {} per block of target '{}'",
                          kb(b.perStage), b.buffers, others(b, 2), nextNeeds, kb(limit), ctx.target.name);
    ctx.decide("stages", std::to_string(stages), "inferred", reason, loc);
    inference.chosen.push_back(stages);
    return stages;
}

namespace pipeline {

using namespace ir;

// Checks the order/stage lists; false after reporting.
bool checkLists(const For* n, size_t count, LowerContext& ctx) {
    const PipelineInfo& p = n->pipeline;
    bool ok = true;
    using Named = std::pair<const char*, const std::vector<int>*>;
    for (const auto& [name, list] : {Named{"order", &p.order}, Named{"stage", &p.stage}}) {
        if (list->empty() || list->size() == count) continue;
        ctx.diags.report(DiagId::err_pipeline_list_length, SourceRange(n->loc), name, list->size(),
                         list->size() == 1 ? "" : "s", count, count == 1 ? "" : "s");
        ok = false;
    }
    if (!ok) return false;
    if (!p.order.empty()) {
        std::vector<int> sorted = p.order;
        std::sort(sorted.begin(), sorted.end());
        for (size_t i = 0; i < sorted.size(); ++i)
            if (sorted[i] != int(i)) {
                ctx.diags.report(DiagId::err_pipeline_order_not_permutation, SourceRange(n->loc), count - 1,
                                 joinInts(p.order));
                return false;
            }
    }
    int last = p.stages > 0 ? p.stages - 1 : INT_MAX;
    for (int s : p.stage)
        if (s < 0 || s > last) {
            ctx.diags.report(DiagId::err_pipeline_stage_range, SourceRange(n->loc), s,
                             p.stages > 0 ? std::to_string(last) : std::string("any"));
            return false;
        }
    return true;
}

// Stages: the author's, or copies that can be producers at stage 0 and the rest last. False
// when the loop gets no pipeline (no producer, or one stage).
bool assignStages(LoopPlan& plan, const PipelinedKernel& kernel, StageInference& inference, LowerContext& ctx) {
    const For* n = plan.loop;
    const PipelineInfo& info = n->pipeline;
    std::vector<Item>& items = plan.items;
    if (!info.stage.empty()) {
        for (size_t i = 0; i < items.size(); ++i) plan.last = std::max(plan.last, items[i].stage = info.stage[i]);
        return plan.last > 0;
    }
    // (the entry point leaves a loop that is not pipelined and has no stage list alone)
    int stages = info.stages;
    std::vector<size_t> producers = readProducers(plan, kernel.accesses);
    if (producers.empty()) return false;
    StageBudget budget;
    std::map<const BufferNode*, int> versions;  // of the loops pipelined before this one
    for (const auto& [b, nb] : kernel.versioned)
        if (const int64_t* v = asConstInt(nb->shape[0])) versions[b] = int(*v);
    std::vector<const BufferNode*> dsts;
    for (size_t i : producers) {
        const auto& dst = producerTile(items[i]);
        int64_t bytes = tileBytes(dst);
        budget.perStage += bytes;
        budget.buffers += fmt::format("{}{} {}", budget.buffers.empty() ? "" : ", ", dst.buffer->name, bytes);
        dsts.push_back(dst.buffer.get());
    }
    budget.planned = [&body = kernel.body, versions, dsts](int s) mutable {
        for (const BufferNode* b : dsts) versions[b] = s;
        return plannedSharedBytes(body, versions, true);
    };
    // A fixed `stages` is checked with the whole pool by plan-shared-memory.
    if (stages == 0) {
        stages = inferStages(budget, inference, ctx, n->loc);
        plan.inferred = int(inference.chosen.size()) - 1;
    }
    plan.last = stages - 1;
    for (auto& it : items) it.stage = plan.last;
    for (size_t i : producers) items[i].stage = 0;
    return plan.last > 0;
}

} // namespace pipeline

} // namespace tlc

#include "passes/PipelineStages.h"

#include <fmt/format.h>

namespace tlc {

namespace {

std::string kb(int64_t bytes) {
    return bytes % 1024 == 0 ? fmt::format("{} KB", bytes / 1024) : fmt::format("{} bytes", bytes);
}

// What the pool holds besides `stages` versions of the producers' buffers, for messages.
std::string others(const StageBudget& b, int stages) {
    int64_t rest = b.planned(stages) - int64_t(stages) * b.perStage;
    return rest > 0 ? fmt::format(" with the kernel's other {} of shared memory", kb(rest)) : "";
}

} // namespace

int inferStages(const StageBudget& b, LowerContext& ctx, SourceLoc loc) {
    int64_t limit = ctx.target.sharedMemPerBlock;
    size_t index = ctx.inferredStages.size();
    int most = kMaxInferredStages;
    if (index < ctx.stageCaps.size()) most = std::min(most, std::max(ctx.stageCaps[index], 1));
    int stages = 1;
    for (int s = most; s > 1; --s)
        if (b.planned(s) <= limit) {
            stages = s;
            break;
        }
    // One stage more: refused by plan-shared-memory with the compiler's scratch buffers, or
    // by the estimate here.
    auto refused = ctx.stagesRefusedBytes.find(int(index));
    bool lowered = refused != ctx.stagesRefusedBytes.end() && stages + 1 > most;
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
    ctx.inferredStages.push_back(stages);
    return stages;
}

} // namespace tlc

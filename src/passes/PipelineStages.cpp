#include "passes/PipelineStages.h"

#include <fmt/format.h>

namespace tlc {

namespace {

int64_t bytesFor(int stages, const StageBudget& b) { return b.kernel + int64_t(stages - 1) * b.perStage; }

// The most stages that fit, at least 1.
int64_t mostStages(const StageBudget& b, int64_t limit) {
    if (b.perStage <= 0) return 1 << 20;
    int64_t room = limit - b.kernel;
    return room < 0 ? 1 : 1 + room / b.perStage;
}

std::string kb(int64_t bytes) {
    return bytes % 1024 == 0 ? fmt::format("{} KB", bytes / 1024) : fmt::format("{} bytes", bytes);
}

} // namespace

int inferStages(const StageBudget& b, LowerContext& ctx, SourceLoc loc) {
    int64_t limit = ctx.target.sharedMemPerBlock;
    int stages = int(std::min<int64_t>(kMaxInferredStages, mostStages(b, limit)));
    std::string others = b.kernel > b.perStage ? fmt::format(" with the kernel's other {} of shared memory", kb(b.kernel - b.perStage)) : "";
    std::string reason =
        stages > 1
            ? fmt::format("{} x {} ({}){} is {}, within the {} per block of target '{}'{}", stages, kb(b.perStage),
                          b.buffers, others, kb(bytesFor(stages, b)), kb(limit), ctx.target.name,
                          stages == kMaxInferredStages ? fmt::format("; {} is the most inferred", kMaxInferredStages)
                                                       : fmt::format("; {} stages would need {}", stages + 1,
                                                                     kb(bytesFor(stages + 1, b))))
            : fmt::format("no pipeline: 2 stages of {} ({}){} need {}, more than the {} per block of target '{}'",
                          kb(b.perStage), b.buffers, others, kb(bytesFor(2, b)), kb(limit), ctx.target.name);
    ctx.decide("stages", std::to_string(stages), "inferred", reason, loc);
    return stages;
}

bool checkStages(int stages, const StageBudget& b, LowerContext& ctx, SourceLoc loc) {
    int64_t limit = ctx.target.sharedMemPerBlock;
    if (bytesFor(stages, b) <= limit) return true;
    ctx.diags.report(DiagId::err_pipeline_stages_shared_memory, SourceRange(loc), stages, ctx.target.name,
                     fmt::format("each stage holds {} ({} bytes), so {} stages and the kernel's other shared buffers "
                                 "({} bytes) need {} bytes, but the target offers {} bytes per block (at most {} "
                                 "stage{} fit)",
                                 b.buffers, b.perStage, stages, b.kernel - b.perStage, bytesFor(stages, b), limit,
                                 mostStages(b, limit), mostStages(b, limit) == 1 ? "" : "s"));
    return false;
}

} // namespace tlc

// How deep a software pipeline may be on a target: `stages` inferred when the author leaves it
// out, and a fixed `stages` checked against the target's shared memory, both from what one more
// stage costs (the producers' destination buffers, one more version each).
#pragma once

#include "ops/LowerContext.h"

#include <string>

namespace tlc {

struct StageBudget {
    int64_t perStage = 0;   // bytes one more stage adds: a version of every producer's buffer
    int64_t kernel = 0;     // the kernel's shared memory without pipelining (one version of each)
    std::string buffers;    // the producers' buffers and their sizes, for messages
};

// The most stages we infer: a third buffer hides most of the load latency on the targets we
// know; deeper pipelines take shared memory (occupancy) for little more.
constexpr int kMaxInferredStages = 3;

// `stages` left out: the largest count up to kMaxInferredStages that fits the target's shared
// memory per block (1: no pipeline); logged with the arithmetic.
int inferStages(const StageBudget& budget, LowerContext& ctx, SourceLoc loc);

// `stages` fixed: false, after err_pipeline_stages_shared_memory, when they do not fit.
bool checkStages(int stages, const StageBudget& budget, LowerContext& ctx, SourceLoc loc);

} // namespace tlc

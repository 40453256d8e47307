// How deep a software pipeline may be on a target: `stages` inferred when the author leaves it
// out, from the shared-memory pool as plan-shared-memory would plan it with that many stages
// (buffers never live at once share bytes; the producers' buffers get one version per stage).
// A fixed `stages` is checked once, with the rest of the pool, by plan-shared-memory after
// lowering (err_pipeline_stages_shared_memory when the loop's versions are live at the peak).
#pragma once

#include "ops/LowerContext.h"
#include "passes/Passes.h"

#include <functional>
#include <string>

namespace tlc {

struct StageBudget {
    int64_t perStage = 0;                   // bytes one more stage adds: a version of every producer's buffer
    std::string buffers;                    // the producers' buffers and their sizes, for messages
    std::function<int64_t(int)> planned;    // the planned pool with that many stages (before scratch)
};

// The most stages we infer: a third buffer hides most of the load latency on the targets we
// know; deeper pipelines take shared memory (occupancy) for little more.
constexpr int kMaxInferredStages = 3;

// `stages` left out: the largest count up to kMaxInferredStages (and up to the loop's entry in
// inference.caps, after lowering found the pool too large with the compiler's scratch buffers)
// whose planned pool fits the target's shared memory per block (1: no pipeline); logged with
// the arithmetic and recorded in inference.chosen.
int inferStages(const StageBudget& budget, StageInference& inference, LowerContext& ctx, SourceLoc loc);

} // namespace tlc

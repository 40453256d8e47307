// How many stages a pipelined loop of gemms needs to hide its loads (docs/lowering.md,
// "Pipeline depth"): the tensor cores at their peak consume a loop's tiles at a rate set by the
// loop's flops per byte; Little's law says an SM must then have rate x latency bytes in flight.
// A loop whose stages keep fewer gets more stages (versions), where shared memory has room.
#pragma once

#include "ast/DType.h"
#include "ops/LowerContext.h"
#include "passes/Passes.h"

#include <functional>
#include <optional>
#include <string>

namespace tlc {

// One pipelined loop as the depth model sees it.
struct DepthModel {
    int64_t stageBytes = 0;            // what one iteration loads into the versioned tiles
    std::string tiles;                 // those tiles, for messages ("A_s, B_s")
    double flops = 0;                  // one iteration's gemm work
    std::optional<DType> type;         // the gemms' input type: which peak
    bool warpSpecialized = false;      // one block per SM (__launch_bounds__(T + 128, 1))
    int64_t fragmentBytes = 0;         // the kernel's fragments: its registers, estimated
    int written = 2;                   // the stages written (or inferred)
    std::optional<int64_t> trips;      // the most iterations the loop runs, where known
    std::function<int64_t(int)> planned;  // the planned pool with that many stages (before scratch)
    int unroll = 1;                    // k-tiles per wgmma group (Unroll.cpp): s - unroll stages in flight
};

// The most stages deepening goes to: each version is a pair of mbarriers and, in the
// prologue/epilogue form, one more unrolled step before and after the loop.
constexpr int kMaxDeepStages = 8;

// Bytes an SM must have in flight for the target's load latency at the tensor cores' peak
// (0 where the profile gives no latency).
double bytesToHide(const DepthModel& m, const Target& target);

// Blocks of the loop's kernel one SM holds with `stages` stages, as far as threads, shared
// memory and registers tell (estimated as the recommender does: fragment bytes / 4 / threads +
// 32 a thread; ptxas knows better); 1 for a warp-specialised loop.
int64_t blocksPerSM(const DepthModel& m, int stages, int threads, const Target& target);

// The stages the loop gets: the fewest from `written` up (to kMaxDeepStages, to the loop's
// trips (more versions than iterations hold nothing), and to the loop's entry in inference.caps
// at index `index` after lowering found the pool too large) whose bytes
// in flight per SM, (stages - 1) x stageBytes x blocks per SM, reach bytesToHide and whose pool
// fits a block; where none reaches it, the one that keeps most in flight. `pinned`: the author
// wrote `deepen = false` (the written stages, the model only logged). Logged as
// `pipeline depth of <subject>`.
int chooseDepth(const DepthModel& m, const std::string& subject, int index, bool pinned,
                const StageInference& inference, LowerContext& ctx, SourceLoc loc);

namespace pipeline {
struct LoopPlan;
struct PipelinedKernel;
// The loop's depth model; nothing where it does not speak for the loop (the author's schedule,
// nothing loaded asynchronously, other work than gemms).
std::optional<DepthModel> depthModel(const LoopPlan& plan, const PipelinedKernel& kernel);
// Bytes of every fragment the body allocates (of constant shape): the registers they take.
int64_t fragmentBytes(const ir::Stmt& body);
// Blocks one SM holds of the kernel as planned so far, without a producer warpgroup: the loop at
// its current stages, the loops pipelined before with theirs (blocksPerSM's estimate).
int64_t blocksPerSMAsPlanned(const LoopPlan& plan, const PipelinedKernel& kernel, const LowerContext& ctx);
} // namespace pipeline

} // namespace tlc

// Tile inference for gemm: the block size a gemm asks for when the author leaves `threads` out,
// the decision log entries of its plan (instruction, warp split, a policy left out), and the
// contradictions between a fixed `threads` or `policy` and the accumulator tile.
#pragma once

#include "ops/gemm/GemmPlan.h"

#include <string>

namespace tlc::ops {

struct ThreadsChoice {
    int64_t threads = 0;  // 0: this gemm does not constrain the block size
    std::string reason;
};

// Tensor-core gemms: enough warps that each thread holds at most 128 accumulators (4 to 16
// warps, whole m16n8 tiles per warp); SIMT gemms: 64 accumulators per thread, at most 256
// threads. docs/recommend.md ("Tile inference") states the rules.
ThreadsChoice gemmThreads(const GemmOp& op, const Target& target);

// Logs the plan (and a policy inference chose) and reports a fixed `threads` the gemm cannot
// split over or a fixed `policy` the split cannot honour.
void explainGemmPlan(const GemmOp& op, const GemmPlan& plan, LowerContext& ctx, SourceLoc loc);

} // namespace tlc::ops

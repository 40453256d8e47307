// The recommender's performance model (docs/recommend.md, "The model"): what a kernel's Tile IR
// does per block (work, global traffic, on-chip storage), and an estimate of the whole grid's
// time on a target from its hardware profile. The search (Recommend.cpp) ranks candidates by it.
#pragma once

#include "ir/Kernel.h"
#include "ast/DType.h"
#include "target/Target.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tlc {

// What the model needs from a kernel's Tile IR.
struct TileWork {
    double flops = 0;         // per block
    double globalBytes = 0;   // per block: global regions of tile ops, global loads and stores
    double invariantBytes = 0;  // of globalBytes: regions at the same place in every block (constant starts)
    int64_t fragmentBytes = 0;
    // The fragments as registers hold them: a gemm's operands and accumulators packed (16-bit
    // pairs in one register), every other fragment a register an element at least (elementwise
    // code converts and computes on unpacked values; the general variant loads them one by one).
    int64_t fragmentRegisterBytes = 0;
    int maxStages = 1;        // of the deepest pipelined loop
    std::optional<DType> gemmType;
    int64_t gemmM = 0, gemmN = 0, gemmK = 0;  // the first gemm's tile (the cpu model's micro-kernel)
    double tileLoopTrips = 1;  // per block: most trips around a tile op (a barrier round each)
    // The shared-memory pool as plan-shared-memory would plan it before lowering
    // (passes/SharedLiveness.h): buffers never live at once share bytes (not on the cpu), each
    // buffer a pipelined loop loads into (from global memory) counted once per stage. The
    // lowered kernel's exact pool adds the compiler's scratch buffers.
    int64_t plannedSharedBytes = 0;
    int64_t blocks = 1;        // the grid, its symbolic sizes at the model's shape
    // The contiguous runs of global memory a block's tile ops move at once (a tile of 64 rows
    // of a wider matrix: 64; of whole rows: 1), summed over the ops: the cpu's hardware
    // prefetchers follow a few dozen such streams a core.
    int64_t globalStreams = 0;
    // Per block, outside every loop: the bytes tile ops write to global memory (a gemm's
    // epilogue), and whether a gemm runs in a pipelined loop (the per-tile term below).
    double epilogueBytes = 0;
    bool pipelinedGemm = false;
    bool persistent = false;   // grid(..., persistent = true): a block per SM looping over tiles
    bool persistentOption = false;  // the grid has a `persistent` argument: the per-tile term applies
    // grid(..., split_k = S) on a GPU (S > 1): each tile as S blocks, each over 1/S of the k-loop,
    // writing its partial accumulator (accumulatorBytes) to the workspace; the last of a tile's S
    // reads the others' and writes the epilogue. splitOption: the grid has a `split_k` argument
    // (the per-tile term applies, as for persistence). kTilesPerSplit: the k-loop's trips a block.
    int64_t splitK = 1;
    bool splitOption = false;
    double accumulatorBytes = 0;
    double kTilesPerSplit = 0;
    int64_t cluster = 1;  // grid(..., cluster = c) on a target with clusters: the multicast term
    // The two memory terms (targets whose profile gives l2_bandwidth_gbps): per block, the
    // global bytes tile ops read, keyed by the grid dimensions the region's place depends on
    // (bit d: the block index of dimension d, x first; split-K's blocks a dimension after the
    // grid's). Blocks that differ only in the other dimensions read the same bytes, and the
    // blocks of one wave fetch those from DRAM once (docs/recommend.md, "Memory").
    std::map<unsigned, double> readsByGridDims;
    std::vector<int64_t> gridDims;  // the grid's extents at the model's shape
    // Per block: the element operations that run on the SMs' lanes rather than the tensor
    // cores (the arithmetic of element loops, reductions' inputs), a special function (exp,
    // rsqrt) counted as the profile's special_function_cost of them.
    double elementOps = 0;
};

// `scalars`: values for integer scalar parameters (--shape), where a grid or loop extent names them.
TileWork analyzeTileWork(const ir::Kernel& kernel, const Target& target, const std::map<std::string, int64_t>& scalars = {});

// The model's view of one configuration. Times in microseconds.
struct CandidateEstimate {
    std::vector<std::pair<std::string, int64_t>> values;  // the auto parameters, in declaration order
    double timeUs = 0, computeUs = 0, memoryUs = 0, syncUs = 0;
    double elementUs = 0;  // of computeUs: the element operations (GPUs)
    double dramBytes = 0;  // of globalBytes, what DRAM serves (the rest hits L2; all without an L2 term)
    double flops = 0, globalBytes = 0, intensity = 0;     // whole grid; intensity in flop/byte
    int64_t blocks = 0;
    int blocksPerSM = 0;
    int64_t waves = 0;
    double waveEfficiency = 0;
    int64_t sharedBytes = 0;         // what the model counts (see docs/recommend.md)
    int64_t loweredSharedBytes = 0;  // the lowered kernel's static shared memory
    int threads = 0;
    int registersPerThread = 0;  // estimate: fragments / threads + a fixed overhead
    int stages = 1;
    double tileUs = 0;  // the per-tile fixed cost exposed (pipeline fill, epilogue), in timeUs
};

// Fills `e` for `work` run as `blocks` blocks of `threads` threads with `shared` bytes of shared
// memory each. Returns why the configuration cannot run on the target (too much shared memory,
// too many registers, no block fits on an SM), or "".
std::string estimate(const TileWork& work, int64_t blocks, int threads, int64_t shared, const Target& target,
                     CandidateEstimate& e);

} // namespace tlc

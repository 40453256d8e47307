// The passes from Tile IR to thread IR, each one function in its own file, and the pass list
// (Lower.cpp), which says where each runs: the passes documented as "the cpu target" run on the
// cpu targets only.
#pragma once

#include "ir/Kernel.h"
#include "ops/LowerContext.h"

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace tlc {

// The statement a pass is in, for diagnostics of what it finds below: `AtLoc at(here_, n->loc);`
// makes n's location current until the scope ends (an invalid one keeps the enclosing).
struct AtLoc {
    SourceLoc& here;
    SourceLoc saved;
    AtLoc(SourceLoc& h, SourceLoc loc) : here(h), saved(h) {
        if (loc.valid()) here = loc;
    }
    ~AtLoc() { here = saved; }
};

// Warns where a tile op can only ever cover part of a dimension set at launch: its region of a
// global tensor spans a constant window of a symbolic extent that no loop, grid or thread index
// moves, and no precondition (`require`) reads that extent (warn_tile_covers_part). Tile IR.
void warnPartialCover(const ir::Kernel& kernel, DiagnosticEngine& diags);

// The cpu target: a global tile staged through a buffer used for nothing else is copied to
// its destination directly (`copy(G, S); copy(S, F)` becomes `copy(G, F)`).
ir::Stmt forwardCopies(const ir::Stmt& body, LowerContext& ctx);

// The cpu target: a parallel loop that only fills the tile a row reduction reads next is
// computed inside the reduction (ops::ElementProducer).
ir::Stmt fuseReductions(const ir::Stmt& body, LowerContext& ctx);

// The cpu target: a gemm whose B tile is read in place from a tensor the kernel never writes,
// and does not move with one of the block indices, keeps its packed tile for the launch; the
// launcher runs that index innermost (Kernel::cpuInnerBlockDim).
ir::Stmt reusePackedB(ir::Kernel& kernel, const ir::Stmt& body, LowerContext& ctx);

// The cpu target: the row reduction that reads a block's tile copied from a tensor also
// prefetches the tile the thread's next block copies (the innermost grid index + 1).
ir::Stmt prefetchNextBlock(const ir::Kernel& kernel, const ir::Stmt& body, LowerContext& ctx);

// The cpu target: a row reduction that reads the tile the copy just before it fills loads the
// tile itself, element by element, where the tile lies inside its tensor (one pass instead of
// two).
ir::Stmt fuseTileLoads(const ir::Stmt& body, LowerContext& ctx);

// The cpu target: a parallel loop that only fills the tile the copy after it stores into a
// tensor is computed by the copy, a cache line at a time (ops::CopyOp::producer).
ir::Stmt fuseTileStores(const ir::Stmt& body, LowerContext& ctx);

// The cpu target: the statements after a row reduction's fill (fuse-tile-loads) that only read
// the tile, element by element, read the tensor in place of it where the tile lies inside it,
// and the fill no longer stores the tile.
ir::Stmt readTilesInPlace(const ir::Stmt& body, LowerContext& ctx);

// The cpu target: a run of loops over the same rows (one per row tile op) whose passes touch,
// where two share a buffer that one writes, only their own row, becomes one loop whose step r runs
// the k-th heavy pass on row r - k, the passes' chunk loops merged (compute beside memory).
//
ir::Stmt interleaveRows(const ir::Stmt& body, LowerContext& ctx);

// The cpu target, last: calls of math functions and float divisions that a loop computes the same
// in every iteration become lets before it (or at the top of its body when they use only its
// variable), where they cannot fault.
ir::Stmt hoistInvariants(const ir::Stmt& body, LowerContext& ctx);

// After lowering: thread-level buffers that nothing reads or writes are not declared.
ir::Stmt dropUnusedBuffers(const ir::Stmt& body);

// Before lowering: fills a `threads` the author left out (kernel.threads == 0) from the gemms'
// accumulators or the largest tile, logging why in kernel.decisions. No-op when it is given.
void inferThreads(ir::Kernel& kernel, const Target& target);

// The expert level in target terms (lane_id(), warp_id(), warp_size(), collectives' default
// widths), each collective lifted into a `let` of its own, block reductions expanded into warp
// reductions over a shared buffer of partials.
ir::Stmt lowerThreadLevel(const ir::Kernel& kernel, const ir::Stmt& body, LowerContext& ctx);

// The cpu target: thread-level code as loops over the block's threads, split at barriers,
// collectives and tile ops; what lives across a split and differs between threads gets one
// entry per thread.
ir::Stmt serializeThreads(const ir::Kernel& kernel, const ir::Stmt& body, LowerContext& ctx);

// Chooses a layout for every fragment (ctx.layouts): gemm accumulators first, then along the
// tile graph (reductions, fragment copies, parallel loops), then defaults for the rest; and
// a swizzle for the shared operands of tensor-core gemms (ctx.sharedLayouts).
// Reports conflicts; returns false if there were any.
bool inferLayouts(const ir::Kernel& kernel, LowerContext& ctx);

// Stage inference across lowering attempts (passes/pipeline/Stages.h). pipeline-loops numbers
// the loops whose `stages` it infers in the order it meets them. plan-shared-memory plans the
// pool with the compiler's scratch buffers, which the inference cannot see: when the pool does
// not fit and an inferred loop's versions are live at its peak, it names the loop in `fewer`
// instead of reporting, and lowerKernel lowers the kernel again from its Tile IR with `caps`
// (each loop at most the stages it chose, one fewer for those in `fewer`).
struct StageInference {
    std::vector<int> caps;                // in: at most this many stages for inferred loop i
    std::map<int, int64_t> refusedBytes;  // in and out: the pool one stage more needed for loop i
    std::vector<int> chosen;              // out, pipeline-loops: the stages inferred for loop i
    std::vector<int> fewer;               // out, plan-shared-memory: loops to lower again with one fewer
};

// On targets with cp.async, turns each `pipelined` loop into a software pipeline: prologue,
// steady state and epilogue of a modulo schedule, async copies into versioned shared buffers,
// cp.async commits and waits, and the barrier of each step. Elsewhere it only checks the
// loops' order/stage lists. Inferred stages follow `stages` (StageInference).
ir::Stmt pipelineLoops(const ir::Stmt& body, LowerContext& ctx, StageInference& stages);

// GPU targets: an im2col in a loop that does not move its rows computes them once, before the
// loop, into a per-thread table (ops::Im2ColRowsOp) that the gather reads. Tile IR.
ir::Stmt hoistIm2colRows(const ir::Stmt& body, LowerContext& ctx);
namespace pipeline {
// After lowering: a grid `cluster` the kernel does not use, with the reason, in --explain (and a
// warning on a target that has clusters). pipeline/Cluster.cpp.
void noteClusterUnused(LowerContext& ctx, SourceLoc loc);
} // namespace pipeline

// `grid(..., split_k = S)` on a GPU: each tile's pipelined k-loop runs as S blocks, the last to
// finish summing the partial tiles and running the epilogue (docs/lowering.md, "Split-K");
// the form is checked on every target. False after an error.
bool splitK(ir::Kernel& kernel, LowerContext& ctx);

// `grid(..., persistent = true)` on a GPU: the body runs in a loop over the tiles the grid named
// (rasterised), the launch sized to the SMs (docs/lowering.md, "Persistent kernels"); the cpu
// keeps one block per tile. Runs first: pipeline-loops carries mbarrier phases across the loop.
ir::Stmt persistentTiles(ir::Kernel& kernel, const ir::Stmt& body, LowerContext& ctx);
// In a persistent warp-specialised kernel the producer warpgroup runs on across the tiles: the
// consumers' block barriers become a named barrier of the consumer threads alone.
ir::Stmt consumerBarriers(const ir::Stmt& body, LowerContext& ctx);
// A persistent kernel's grid: the SMs times the blocks one holds (threads, planned shared
// memory); and the wait for its last tile's deferred TMA stores after its loop over tiles.
void persistentGrid(ir::Kernel& kernel, const LowerContext& ctx);

// Places block barriers between tile-level statements that touch the same shared buffer from
// different threads (read after write, write after read or write), loop-carried ones included.
// Buffers the pipeline orders with mbarriers (BufferNode::mbarrierOrdered) are left alone.
ir::Stmt insertBarriers(const ir::Stmt& body, const LowerContext& ctx);

// Replaces tile ops, parallel and pipelined loops and fragments with thread-level code.
ir::Stmt lowerTileOps(const ir::Stmt& body, LowerContext& ctx);

// Stores shared buffers as layout inference or annotate_layout chose: swizzled accesses,
// padded rows, boxes (wgmma's canonical layouts), alignment; scratch buffers as stored.
ir::Stmt applySharedLayouts(const ir::Stmt& body, LowerContext& ctx);

// Declares the ops' scratch buffers and gives every shared buffer an offset in one pool,
// letting buffers whose live ranges do not overlap share bytes (with a barrier between the old
// and the new user); records the plan on the kernel (sharedBytes, sharedPlan) and checks the
// total against the target.
// When the pool does not fit with an inferred loop's versions live at its peak, the loop goes to
// stages.fewer instead of an error.
ir::Stmt planSharedMemory(ir::Kernel& kernel, const ir::Stmt& body, LowerContext& ctx, StageInference& stages);

// Consecutive copies into shared memory (outside pipelines) wait once, after the last of them,
// not each for its own cp.async; copies into the same buffer still wait in between.
ir::Stmt batchAsyncWaits(const ir::Stmt& body);

// For --emit=shared: the plan, one line per buffer (offsets, sizes, alignment, live ranges).
std::string describeSharedPlan(const ir::Kernel& kernel);

struct PassOptions {
    std::vector<std::string> printAfter;  // pass names
    bool printAfterAll = false;
    bool timePasses = false;
};

// The pass list. Lowers the kernel in place; false if a pass reported errors. The kernel is Tile
// IR with its thread count known (inferThreads ran: compile/Compile.cpp does both).
bool lowerKernel(ir::Kernel& kernel, const Target& target, DiagnosticEngine& diags, const PassOptions& options,
                 std::ostream& dumps);

// Names of the passes, for --print-after validation and --help.
const std::vector<std::string>& passNames();

// What layout inference chose for a kernel (of Tile IR whose thread count is known, as
// lowerKernel takes it): every fragment's layout and shared buffer's stored layout in program
// order of their declarations, the gemm plans, how pipelined copies move, and the bank-conflict
// cost of each modelled shared access. --emit=layouts prints it; the kernel report draws it.
struct LayoutFacts {
    int64_t threads = 0;
    std::vector<std::pair<ir::Buffer, layout::Fragment>> fragments;
    std::vector<std::pair<ir::Buffer, LowerContext::SharedLayout>> shared;  // those stored swizzled or padded
    std::vector<ir::Buffer> allShared;                                       // every shared allocation
    std::vector<std::string> gemmPlans;
    std::vector<ir::CopyDecision> copies;
    std::vector<LowerContext::SharedAccessCost> accessCosts;
};
// False when inference failed (reported to `diags`).
bool inferLayoutFacts(ir::Kernel& kernel, const Target& target, DiagnosticEngine& diags, LayoutFacts& facts);

// For --emit=layouts: the facts above as text, one line per fragment and shared layout.
std::string describeLayouts(ir::Kernel& kernel, const Target& target, DiagnosticEngine& diags);

} // namespace tlc

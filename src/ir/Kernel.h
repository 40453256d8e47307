// A kernel in IR form: parameters, launch configuration and body.
#pragma once

#include "ir/Stmt.h"
#include "support/DecisionLog.h"

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace tlc::ir {

// Something the launcher verifies before launching: what the lowering's fast path needs of the
// arguments (row lengths, alignment). A kernel with a general variant (Kernel::generalVariant)
// runs that one when a check fails; one without returns an error code.
struct LaunchCheck {
    Expr condition;        // over size and scalar parameters; null for an alignment check
    std::string tensor;    // alignment check: the tensor parameter
    int alignBytes = 0;    // alignment check: required alignment of its data pointer
    std::string message;   // why it must hold, for the error message
};

// A precondition the author wrote at the kernel's top (`require N <= block_N;`): every launcher
// of the kernel refuses arguments that break it, whatever the variant.
struct Precondition {
    Expr condition;    // over sizes, scalar parameters and constants
    std::string text;  // as the source has it, for comments and messages
    SourceLoc loc;
};

// A TMA tensor map the launcher builds (tl::make_tensor_map_2d, or tl::make_tensor_map<R> for
// a tensor of R = 3 to 5 dimensions) and passes to the kernel as a `const __grid_constant__
// CUtensorMap` parameter: boxes of a row-major tensor, `box` elements in each of its dimensions
// (outermost first, 1 in those a tile squeezes), stored with a 16-byte-chunk swizzle of
// swizzleBytes (0: none).
struct TensorMap {
    Buffer map;                // rank 0, how kernel code names it (address_of(load(map, {})))
    std::string tensor;        // the tensor parameter it describes
    std::vector<int64_t> box;  // one extent per dimension of the tensor
    int swizzleBytes = 0;
    // The buffer the map describes: the parameter's own, or a view of it (BufferNode::viewOf)
    // with another shape; its sizes and strides are the map's, the parameter's pointer its base.
    Buffer source;
};

// How pipeline-loops moved a global-to-shared copy and why (LowerContext::copyDecisions, for
// --emit=layouts; --explain reads the decision log).
struct CopyDecision {
    std::string copy;    // the copy as the source has it
    std::string form;    // "tma" or "cp.async"
    std::string reason;  // why not TMA (empty for TMA)
};

// A software-pipelined loop as its schedule came out (pipeline-loops records it; the kernel
// report draws it as a timeline, src/report): the steps of one steady-state iteration.
struct PipelineSummary {
    struct Step {
        std::string text;   // the statement as the source has it: "copy(A[...], A_s)"
        std::string kind;   // "copy", "gemm", or the tile op's name; "other" for plain statements
        int stage = 0;      // iteration t runs it for iteration t - stage
        bool async = false; // an asynchronous producer (cp.async or TMA)
        bool tma = false;   // issued as a TMA load
        bool producer = false;  // run by the producer warpgroup (warp specialisation)
        SourceLoc loc;
    };
    std::string loop;       // "pipelined loop over k"
    SourceLoc loc;
    std::string schedule;   // "modulo (cp.async)", "modulo (TMA + mbarriers)", "warp-specialised", "register prefetch"
    int stages = 1;
    std::vector<Step> steps;  // in the order of one steady-state step
    std::vector<std::pair<std::string, int>> versions;  // versioned shared buffers and their copies
    int64_t tmaBytes = 0;     // bytes one iteration's TMA boxes bring (mbarrier transaction count)
    bool mbarriers = false;   // full/empty mbarrier arrays order the versions
    bool warpSpecialised = false;
    int producerThreads = 0;  // warp specialisation: the producer warpgroup's threads
    std::string inFlight;     // the gemm whose wgmma group stays in flight past its step
};

// Where plan-shared-memory put a shared buffer in the block's one shared-memory pool. Buffers
// whose live ranges do not overlap may share bytes.
struct SharedSlot {
    Buffer buffer;         // as allocated in the lowered body
    int64_t offset = 0;    // bytes from the start of the pool, a multiple of align
    int64_t bytes = 0;
    int64_t align = 16;
    int first = 0, last = 0;  // live range: statements of the body numbered in preorder
    SourceLoc firstLoc, lastLoc;  // the .tl lines of the first and last use (a loop's for uses inside it)
};

struct KernelParam {
    enum class Kind { Tensor, Scalar, Size };
    Kind kind;
    std::string name;
    DType dtype;
    Buffer buffer;  // Tensor: the global buffer
    VarPtr var;     // Scalar and Size: the variable
    // Tensor: global scratch (alloc_global). Not a launcher parameter: the launcher of the
    // kernel's grids points it into the caller's workspace (Kernel::group).
    bool scratch = false;
    // Scratch the group's launcher zeroes on the stream before the grids (split-K's arrival
    // counters, passes/SplitK.cpp): the caller's workspace may hold anything.
    bool zeroed = false;
};

struct Kernel {
    std::string name;
    std::vector<std::string> externHeaders;  // `import`ed headers, included by the output as written
    std::string sourceName;  // the .tl file, for comments
    SourceLoc loc;
    std::vector<std::pair<std::string, std::string>> templateValues;  // name, value: for comments
    std::vector<KernelParam> params;  // tensors and scalars in source order, then sizes
    std::vector<Expr> gridExtents;    // 1 to 3, over params
    std::vector<VarPtr> blockVars;    // as many as named in `as (...)`
    int threads = 1;                  // 0 until inferred when the author left `threads` out
    Stmt body;                        // what one block runs

    // A source kernel with several grids, or with global scratch, becomes one Kernel per grid
    // (its parts, consecutive in the driver's list, each lowered on its own) and one launcher
    // named `group` that takes a workspace and launches the parts in order on the stream.
    // Empty for a plain one-grid kernel, which keeps its own launcher.
    std::string group;
    int part = 0, parts = 1;          // this grid's index, and how many the source kernel has

    std::vector<Precondition> preconditions;  // `require` statements, in source order

    // `grid(..., persistent = true)`: the pass persistent-tiles (passes/PersistentTiles.cpp)
    // makes the launch one block per SM that loops over the tiles. rasterPanel: the panel
    // use_swizzle already rasterises the block indices with (0: none; the pass rasterises).
    bool persistent = false;
    bool persistentWritten = false;  // the grid has a `persistent` argument (true or false)
    int64_t rasterPanel = 0;

    // `grid(..., split_k = S)`: the pass split-k (passes/SplitK.cpp) runs each tile's pipelined
    // k-loop as S blocks, the last of them to finish summing the others' partial tiles and
    // running the rest of the body. A grid with the argument (any S) has a workspace launcher.
    int64_t splitK = 1;
    bool splitKWritten = false;
    SourceLoc splitKLoc;  // the argument, for diagnostics
    // `grid(..., cluster = N)`: the blocks per thread-block cluster the author asked for (1: none).
    // Lowering sets clusterSize and clusterDim (0 x, 1 y, 2 z) to what the kernel launches with:
    // N along the grid dimension whose blocks share a multicast TMA operand, or 1 where the
    // target has no clusters or the kernel no such operand (docs/lowering.md, "Clusters").
    int cluster = 1;
    int clusterSize = 1, clusterDim = 0;

    // Shape variants (docs/lowering.md, "Shape variants"). A kernel whose fast path needs
    // something of the arguments (launchChecks, tensorMaps: fastPathConditions) is compiled a
    // second time with generalShapes set: that lowering assumes nothing about row lengths or
    // pointer alignment (element moves, no TMA), and its launcher (static, named generalVariant)
    // takes every shape and pointer the language does. The fast kernel keeps the source's name
    // and calls it when the conditions fail. For a group, generalVariant names the general
    // group's launcher.
    bool generalShapes = false;
    std::string generalVariant;

    // Set by lowering.
    VarPtr threadIndex;               // the thread index within the block
    int64_t sharedBytes = 0;          // the shared-memory pool of the lowered body
    std::vector<SharedSlot> sharedPlan;  // every shared buffer live code uses, in allocation order
    std::vector<LaunchCheck> launchChecks;
    std::vector<TensorMap> tensorMaps;                   // in order of first use
    int producerThreads = 0;  // the last ones of `threads`: a warp-specialised producer warpgroup
    std::vector<PipelineSummary> pipelines;  // each software-pipelined loop's schedule (the report)
    // The cpu launcher's innermost grid loop (0: x, as on a GPU), and whether the block's gemms
    // keep B's packed tiles for the launch (reuse-packed-b: the launcher starts a new launch).
    int cpuInnerBlockDim = 0;
    bool cpuReusesPackedTiles = false;

    // What inference and lowering chose for the author, and why (--explain).
    DecisionLog decisions;

    // The Tile IR this kernel was lowered from (threads inferred), kept only when the compile
    // asked for it (CompileOptions::keepTileIR: the kernel report's layouts, dataflow, model).
    std::shared_ptr<const Kernel> tileLevel;
};

// What the fast path of lowered kernel `k` needs of its arguments: its launch checks, and for each
// TMA map a 16-byte aligned base and strides of 16-byte multiples (TMA's rules, which the
// launcher's tl::make_tensor_map_* would refuse). One alignment check per tensor (the largest);
// none that fold to true. Empty: any shape and element-aligned pointer runs.
std::vector<LaunchCheck> fastPathConditions(const Kernel& k);

// Whether `g` is (a part of) the general variant of `fast` (a plain kernel, or a group's part).
bool isGeneralVariantOf(const Kernel& g, const Kernel& fast);

// A condition as the launcher's comment, the manifest and --explain say it: "K % 8 == 0 (the row
// stride of A must be a multiple of 8 (vectorised access))", "A is 16-byte aligned (...)".
std::string describe(const LaunchCheck& c);

} // namespace tlc::ir

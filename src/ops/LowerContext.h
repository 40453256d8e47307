// What lowering a tile op needs to know: the target, the block's threads, the inferred
// fragment layouts and the per-thread buffers that hold fragments, plus services (scratch
// shared memory, fresh names, launch checks, diagnostics).
#pragma once

#include "ir/Kernel.h"
#include "ir/Simplify.h"
#include "layout/BankConflicts.h"
#include "layout/Fragment.h"
#include "layout/Swizzle.h"
#include "support/DecisionLog.h"
#include "support/Diagnostics.h"
#include "target/Target.h"

#include <map>
#include <set>
#include <string>

namespace tlc {

class LowerContext {
public:
    LowerContext(const Target& target, int64_t threads, DiagnosticEngine& diags);

    const Target& target;
    const int64_t threads;    // threads per block as lowered (1 on the cpu)
    const int64_t warpSize;   // lanes that can exchange registers (1 on the cpu)
    DiagnosticEngine& diags;
    ir::VarPtr threadIndex;   // tx
    ir::Expr tx() const { return ir::Expr(threadIndex); }
    // The target's shared-memory banks, as the bank-conflict cost model takes them.
    layout::BankModel sharedBanks() const { return {target.sharedBanks, target.sharedBankBytes}; }

    // Fragment layouts chosen by layout inference, by buffer.
    std::map<const ir::BufferNode*, layout::Fragment> layouts;
    const layout::Fragment& layoutOf(const ir::Buffer& fragment) const;
    // Shared buffers stored swizzled or padded (chosen with the layouts, applied after
    // lowering), and why, for --emit=layouts.
    struct SharedLayout {
        layout::Swizzle swizzle;
        int64_t padElems = 0;  // added to every row
        // Rows wider than one swizzle span stored as boxes of boxCols columns, one after the
        // other ([rows, cols] as [cols / boxCols, rows, boxCols]): the canonical layout wgmma
        // and TMA read. 0: rows stay whole.
        int64_t boxCols = 0;
        int64_t alignBytes = 0;  // the buffer's start (BufferNode::alignBytes)
        std::string reason;
        std::string str() const;  // for --emit=layouts
    };
    std::map<const ir::BufferNode*, SharedLayout> sharedLayouts;
    // How each gemm runs where there was a choice to explain (wgmma, or why not), in program
    // order, for --emit=layouts.
    std::vector<std::string> gemmPlans;
    // Gives a shared tile that tensor cores read eight rows at a time (ldmatrix) the swizzle
    // that keeps those reads free of bank conflicts, unless it has a layout already or its rows
    // allow none. `reason` is what --emit=layouts says asked for it.
    void swizzleForTensorCores(const ir::Buffer& shared, std::string reason);

    // The per-thread array that holds a fragment after lowering.
    ir::Buffer localBuffer(const ir::Buffer& fragment);

    // Shared memory for an op's internal use (reduction partials, staging); allocated at the
    // top of the kernel by the lowering pass.
    // `transient`: the op's code starts and ends with a barrier and keeps nothing in the buffer
    // from one run to the next, so inside a loop it is live only where the op runs (not for the
    // whole loop, as buffers that carry values to the next iteration are).
    ir::Buffer scratch(const std::string& name, DType dtype, const std::vector<int64_t>& shape, bool transient = false);
    const std::vector<ir::Buffer>& scratchBuffers() const { return scratch_; }
    const std::set<std::string>& transientScratch() const { return transient_; }
    // The shared copy of a fragment for reads of elements other threads hold (one per
    // fragment, its elements row-major; see ops::stageToShared).
    ir::Buffer exchangeBuffer(const ir::Buffer& fragment);
    // Bytes of scratch the op being lowered may take without raising the block's shared-memory
    // peak: what the buffers live around it leave free (lower-tile-ops sets it for each op;
    // plan-shared-memory then lets the scratch reuse those bytes).
    int64_t sharedHeadroom = 0;
    // Declares `to` instead of scratch buffer `from` (apply-shared-layouts: as stored).
    void replaceScratch(const ir::Buffer& from, const ir::Buffer& to);

    // A name for compiler-made code: `base` unless the kernel's own names use it. Scopes of
    // compiler-made variables never nest across ops, so siblings may share names (l, it, e).
    std::string freshName(const std::string& base);
    void reserveName(const std::string& name) { names_.insert(name); }
    ir::VarPtr freshVar(const std::string& base, DType t = DType::I32);

    // What lowering adds to the kernel (lowerKernel moves it onto ir::Kernel): the launcher's
    // checks; TMA's tensor maps (docs/lowering.md, "TMA copies and the mbarrier pipeline"), the
    // kernel's parameters; the threads of a warp-specialised pipeline's producer warpgroup, added
    // to the launch after the `threads` the lowering spreads work over. copyDecisions: each
    // pipelined global-to-shared copy's form, for --emit=layouts.
    std::vector<ir::LaunchCheck> launchChecks;
    std::vector<ir::TensorMap> tensorMaps;
    // `box` per dimension of the tensor, outermost first (1 in those the tile squeezes); the
    // rows of a box are its innermost side.
    const ir::Buffer& tensorMap(const ir::Buffer& tensor, const std::vector<int64_t>& box, int swizzleBytes);
    int64_t producerThreads = 0;
    // A persistent kernel (passes/PersistentTiles.cpp): the counter of the loop over the block's
    // tiles (null otherwise), and the named barrier its warp-specialised consumers synchronise on
    // while the producer warpgroup keeps running (0: none; consumer-barriers rewrites the
    // consumers' block barriers to it).
    ir::VarPtr persistentTile;
    int64_t consumerBarrier = 0;
    std::vector<ir::CopyDecision> copyDecisions;
    std::vector<ir::PipelineSummary> pipelines;  // pipeline-loops: each pipelined loop's schedule
    // Layout inference: the bank-conflict wavefronts of each modelled access of a shared buffer
    // under the layout it got (layout/BankConflicts.h), for the kernel report.
    struct SharedAccessCost {
        ir::Buffer buffer;
        std::string access;       // the op
        int64_t conflicts = 0;    // wavefronts past one per phase, every warp, one pass
        int64_t rowMajorConflicts = 0;  // the same stored row-major, for comparison
    };
    std::vector<SharedAccessCost> sharedAccessCosts;
    // What ops tell each other while lower-tile-ops runs: the alignment TMA boxes need of a
    // shared tile (plan-shared-memory reads it back); the accumulators of gemms lowered with
    // their wgmma group left in flight, with the slots each thread holds (the wgmma_drain after
    // their loop waits and fences them). What the software pipeline decides for later passes is
    // in the IR (BufferNode::pipeline) or in StageInference (passes/Passes.h).
    std::map<const ir::BufferNode*, int> sharedAlignment;
    std::map<const ir::BufferNode*, int64_t> wgmmaInFlight;

    // The author left `threads` out (inferThreads chose it): nothing to contradict.
    bool threadsInferred = false;
    // The kernel's decision log (--explain); null when nobody asked (--emit=layouts, tests).
    DecisionLog* decisionLog = nullptr;
    // Records a value chosen for the author and the rule that forced it.
    void decide(std::string subject, std::string value, std::string origin, std::string reason, SourceLoc loc = {});

    void requireLaunch(ir::Expr condition, std::string message);
    void requireAlignment(const ir::Buffer& tensor, int bytes);

    ir::VarBounds bounds() const;  // what the simplifier may assume (0 <= tx < threads)

    // Loops over a thread's fragment slots: fully unrolled on GPUs, where register arrays
    // need constant indices; plain on the CPU, where the C++ compiler vectorises them.
    ir::ForKind slotLoopKind() const;
    // The kernel's general variant is being lowered (ir::Kernel::generalShapes): nothing may be
    // assumed of row lengths or pointers beyond their element's alignment, so nothing may need
    // a launch check (no vector global moves, no TMA).
    bool generalShapes = false;
    // Thread-block clusters (grid's `cluster`, docs/lowering.md "Clusters"): the size the author
    // asked for, the grid (its extents and raw block indices) it would cluster, and what the
    // warp-specialised pipeline made of it (pipeline/Cluster.cpp): size 1 where it clusters
    // nothing, else `size` blocks along grid dimension `dim`.
    int64_t clusterAsked = 1;
    int64_t splitK = 1;  // the grid's split_k (passes/SplitK.cpp): clusters refused beside a split
    std::vector<ir::Expr> gridExtents;
    std::vector<ir::VarPtr> blockVars;
    int64_t clusterSize = 1;
    int clusterDim = 0;
    std::string clusterWhy;  // why a warp-specialised loop did not cluster (pipeline/Cluster.cpp)
    // Whether global memory moves may use vectors (which need aligned, padded tensors, checked
    // at launch). The CPU's compiler vectorises plain loops without those conditions; a general
    // variant has none to check.
    bool vectorizeGlobal() const;

private:
    std::map<const ir::BufferNode*, ir::Buffer> locals_;
    std::map<const ir::BufferNode*, ir::Buffer> exchange_;
    std::vector<ir::Buffer> scratch_;
    std::set<std::string> transient_;  // names of transient scratch buffers
    std::set<std::string> names_;
};

} // namespace tlc

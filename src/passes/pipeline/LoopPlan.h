// What the files of the software pipeline share (passes/PipelineLoops.cpp is the entry point;
// docs/lowering.md, "The pipeline's files", maps this folder). A pipelined loop goes through
// named steps that fill a LoopPlan, each step in its own file:
//
//     LoopBody.cpp         the body as schedule items: flattened, with what each statement touches
//     Producers.cpp        which fills (copies, im2col) can be producers (asynchronous, a version ahead)
//     Stages.cpp           the order/stage lists' checks; the stages, the author's or inferred
//     Versioning.cpp       which shared buffers get versions; one instance of a statement
//     Tma.cpp              which producers are TMA loads; the mbarrier protocol around them
//     WgmmaInFlight.cpp    the gemm whose wgmma group stays in flight past its step
//     PingPong.cpp         consumer warpgroups that take turns issuing the loop's gemms
//     Overlap.cpp          the second of two gemms a stage later, overlapping the work between them
//     Depth.cpp            more stages than written where they keep too few bytes in flight
//     Unroll.cpp           several k-tiles per wgmma group where one carries too little work
//     Cluster.cpp          thread-block clusters whose blocks share a multicast TMA tile (sm90)
//
// and a schedule reads the plan and emits the loop's code, one schedule a file:
//
//     ModuloSchedule.cpp   cp.async (and TMA) modulo schedule: prologue, steady state, epilogue
//     WarpSpecialize.cpp   a producer warpgroup issues the TMA loads; the kernel split in two
//     Persistent.cpp       ... its versions and phases carried across a persistent kernel's tiles
//     RegisterPrefetch.cpp targets without cp.async: the next iteration's tiles through registers
//     UnrolledSteps.cpp    the TMA schedules (both forms) with several k-tiles per wgmma group
//
// A new schedule is a new file: a function that reads a LoopPlan (declared below), chosen in
// PipelineLoops.cpp.
#pragma once

#include "ir/Accesses.h"
#include "ir/Stmt.h"
#include "ir/TileOp.h"
#include "ir/Visitor.h"
#include "ops/LowerContext.h"
#include "ops/annotate_layout/AnnotateLayout.h"
#include "ops/copy/Copy.h"
#include "ops/gemm/Gemm.h"
#include "passes/Passes.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tlc::pipeline {

using BufferSet = std::set<const ir::BufferNode*>;
using AccessCounts = std::map<const ir::BufferNode*, int>;  // accesses of each buffer (countAccesses)

using ir::Footprint;  // what a statement touches (ir/Accesses.h)

// The variables an expression or a statement reads (tile ops' positions included).
class VarsRead : public ir::IRVisitor {
public:
    std::set<const ir::Var*> vars;

protected:
    void visitVar(const ir::Var* n) override { vars.insert(n); }
};

// The loop body as a list of top-level statements: sequences flattened, `let`s of pure values
// substituted into what follows, allocations hoisted (a scalar's initial value becomes a store
// where it was declared).
struct FlatBody {
    std::vector<ir::Stmt> stmts;
    std::vector<const ir::Allocate*> allocs;  // outermost first
};

// A statement of the loop body in the schedule: its stage σ and its position in the order of
// one step (step t runs, in that order, each statement for iteration t - σ).
struct Item {
    ir::Stmt stmt;
    Footprint fp;
    int stage = 0;
    int pos = 0;
    bool async = false;      // an async producer
    bool tma = false;        // ... issued as a TMA load
    bool tmaReader = false;  // reads a TMA-filled buffer
};

// A shared buffer the pipeline versions: its one writer, versions, whether it fills async, and
// the versions it has beyond one per stage (a cp.async tile a wgmma group in flight reads).
struct VersionPlan {
    size_t writer;
    int count;
    bool async;
    int extra = 0;
};
using Versions = std::map<const ir::BufferNode*, VersionPlan>;

// The TMA side of one pipelined loop: its barrier arrays (null when no producer is TMA),
// versions, the bytes one iteration's boxes bring, and a comment per copy left to cp.async.
struct TmaPlan {
    ir::Buffer full, empty;  // made by makeTmaBuffers once the loop's depth is final
    int64_t versions = 0;    // 0: no producer is a TMA load
    int64_t bytes = 0;
    std::vector<std::string> notes;
    // A thread-block cluster (Cluster.cpp): `cluster` blocks along grid dimension clusterDim
    // share the TMA items in `multicast` (each block loads its share into all of them) and
    // release every version on all of the cluster's `empty` barriers. 1: no cluster.
    int64_t cluster = 1;
    int clusterDim = 0;
    std::set<size_t> multicast;
    bool used() const { return versions > 0; }
};

// The ping-pong schedule of a loop (PingPong.cpp): its consumer warpgroups take turns issuing
// its wgmma gemms, in order, so that one warpgroup's other statements (flash attention's
// softmax) run while the next one's gemms keep the tensor cores busy.
struct PingPongPlan {
    int64_t warpgroups = 0;    // 0: none
    int64_t firstBarrier = 1;  // warpgroup w waits on named barrier firstBarrier + w
    std::set<size_t> gemms;    // the items that are turns
    bool used() const { return warpgroups > 1; }
};

// The intra-warpgroup overlap of a loop (Overlap.cpp): its second gemm a stage later, issued
// right after the first, waited for after the statements between them.
struct OverlapPlan {
    size_t first = SIZE_MAX, second = SIZE_MAX;  // the two gemm items
    std::set<const ir::BufferNode*> carried;      // fragments the second gemm uses (no versions)
    bool used() const { return second != SIZE_MAX; }
};

// One pipelined loop as the steps below plan it; the schedules read it. `items.size()` stands
// for "none" where a field names a statement.
struct LoopPlan {
    const ir::For* loop = nullptr;
    int depth = 0;  // loops around it
    FlatBody flat;
    std::vector<Item> items;
    std::vector<size_t> byPos;  // the items in the order of one step
    BufferSet loopWrites;       // buffers the loop writes
    AccessCounts inLoop;        // accesses in the loop's body
    int last = 0;               // the last stage S
    int inferred = -1;          // this loop's number among those whose stages are inferred
    Versions versions;
    std::vector<const ir::BufferNode*> shared;  // in order of first use (pointers do not order output)
    std::map<const ir::BufferNode*, ir::Buffer> versionedBuffers;  // old -> with a leading version dimension
    TmaPlan tma;
    bool warpSpecialize = false;
    size_t inFlight = 0;  // the gemm whose wgmma group stays in flight past its step
    int unroll = 1;       // iterations (k-tiles) whose wgmmas form one group (Unroll.cpp)
    std::string unrollWhy;  // the reason of chooseUnroll's choice, for the decision log
    PingPongPlan pingPong;
    OverlapPlan overlap;
    // A warp-specialised loop inside a persistent kernel's loop over tiles (Persistent.cpp): the
    // iterations of the block's earlier tiles, added to the loop's iteration wherever it picks a
    // version or an mbarrier phase, so that both run on from tile to tile (null: none).
    ir::Expr carry;
};

// The named barrier a warp-specialised loop's consumer warpgroups meet at instead of
// __syncthreads while the producer runs on (ping-pong's turns take ids 1 .. 4).
constexpr int64_t kConsumerBarrier = 8;

// A `let` around a top-level pipelined loop (between the grid and the loop): a warp-specialised
// producer that needs its value declares it again in its own branch, which it can only when the
// value reads nothing the consumer threads alone hold or may still change (producerPrelude).
struct OuterLet {
    ir::VarPtr var;
    ir::Expr value;
    SourceLoc loc;
    bool inTile = false;  // inside a persistent kernel's loop over tiles (declared per tile)
};

// What runs before a top-level pipelined loop and is still in scope there, in order: the lets
// and allocations around it and the statements between them. A warp-specialised producer runs
// again those its loop needs: the lets, and the `var`s the code before the loop computes (grouped
// GEMM's group index, found by a scan) with their declarations and the statements that assign
// them, where those read only what the producer can read too (`issue`: why a statement cannot).
struct PreludeItem {
    enum class Kind { Let, Alloc, Stmt } kind = Kind::Stmt;
    size_t let = 0;     // Let: its index in TopLevelLoop::lets
    ir::Stmt node;      // Alloc: the Allocate (replayed without its body); Stmt: the statement
    std::set<const ir::BufferNode*> writes;  // Stmt: the variables it assigns
    std::string issue;  // Stmt: why the producer cannot run it again, its reads aside (empty: it can)
};

// What a top-level pipelined loop needs to know about the code before it: whether that is free
// of block barriers (no shared memory, only ops that never synchronise: warp specialisation
// needs both), and the lets around it, outermost first.
struct TopLevelLoop {
    bool clean = true;
    std::vector<OuterLet> lets;
    std::vector<PreludeItem> prelude;
    BufferSet writtenBefore;  // global buffers the code before the loop writes
    const ir::For* tileLoop = nullptr;  // a persistent kernel's loop over tiles around it
};

// A warp-specialised loop (at most one per kernel): the producer's loop, the barriers and
// their initialisation, and the tiles the producer fills (declared before the split).
struct WarpSpecialized {
    ir::Stmt producer, init;
    // In a cluster: the consumers' side of a block the launch adds to fill the last cluster
    // (`live` false): it takes part in the protocol (waits on full, releases every version) and
    // computes and stores nothing.
    ir::Stmt idleConsumers;
    ir::Expr live;
    ir::Buffer full, empty;
    std::vector<ir::Buffer> tiles;
};

// The kernel being pipelined: what the steps need to know about the whole of it, and what the
// loops pipelined so far did to it.
struct PipelinedKernel {
    ir::Stmt body;          // the tile-level body, for the shared-memory plan
    AccessCounts accesses;  // in the whole kernel
    std::map<const ir::BufferNode*, layout::SharedLayoutName> annotated;  // annotate_layout's (TMA must produce them)
    std::map<const ir::For*, TopLevelLoop> topLevel;  // pipelined loops at the kernel's top level
    std::map<const ir::BufferNode*, ir::Buffer> versioned;  // shared buffers replaced by versioned ones
    std::optional<WarpSpecialized> warpSpecialized;
    bool pingPong = false;  // a loop of the kernel has the ping-pong schedule (at most one does)

    PipelinedKernel(const ir::Stmt& body, const ir::Var* tileVar);
};

// LoopBody.cpp
// The subject of a loop's entries in the decision log: "pipelined loop over k".
std::string loopSubject(const ir::For* n);
// The places that access each buffer (a load, a store, a tile op), for "is it used outside the
// loop": an annotate_layout is none (PipelineLoops.cpp points it at the versioned buffer).
AccessCounts countAccesses(const ir::Stmt& s);
// False when a `let` reads memory (its value could change between stages).
bool flattenBody(const ir::Stmt& body, FlatBody& out);
// A loop the schedules here can rewrite: it counts from 0 in steps of 1.
bool countsFromZero(const ir::For* n);
// The plan's first part: the body's statements as items (positions from the `order` list,
// which checkLists has checked), the buffers the loop writes and its accesses.
LoopPlan analyseLoop(const ir::For* n, FlatBody flat, int depth);

// Producers.cpp
std::string producerIssue(const LoopPlan& plan, size_t i, const AccessCounts& inKernel,
                          bool* wrongSchedule = nullptr);
std::vector<size_t> readProducers(const LoopPlan& plan, const AccessCounts& inKernel);
// The item's op when it fills a shared tile from global memory (a copy, an im2col; null else),
// the tile a producer fills, and the copy a producer is (null for another op: only copies
// become TMA loads or prefetches through registers).
const ops::Op* fillOf(const Item& item);
const ir::Region& producerTile(const Item& producer);
const ops::CopyOp* copyOf(const Item& producer);
int64_t tileBytes(const ir::Region& r);

// Stages.cpp
bool checkLists(const ir::For* n, size_t count, LowerContext& ctx);
bool assignStages(LoopPlan& plan, const PipelinedKernel& kernel, StageInference& inference, LowerContext& ctx);

// Versioning.cpp
bool checkUnversionedBuffers(const LoopPlan& plan, bool checkOnly, LowerContext& ctx);
bool planVersions(LoopPlan& plan, const PipelinedKernel& kernel, bool checkOnly, LowerContext& ctx);
void versionBuffers(LoopPlan& plan);
ir::Stmt instance(const LoopPlan& plan, size_t i, const ir::Expr& iter, bool elected = false,
                  ops::GemmOp::GroupPart part = ops::GemmOp::GroupPart::Whole);
std::string versionList(const LoopPlan& plan);
// The item's gemm, or null when it is another statement.
const ops::GemmOp* gemmOf(const Item& item);
ir::Stmt retargetAnnotations(const ir::Stmt& body, const std::map<const ir::BufferNode*, ir::Buffer>& versioned);

// Tma.cpp
std::map<const ir::BufferNode*, layout::SharedLayoutName> annotatedLayouts(const ir::Stmt& body);
void chooseTma(LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx);
void makeTmaBuffers(LoopPlan& plan, LowerContext& ctx);
// `beforeSplit`: before a warp-specialised split, never run again (no barrier first inside a loop).
ir::Stmt initBarriers(const LoopPlan& plan, LowerContext& ctx, bool beforeSplit = false);
// The loop's iteration `iter` counted from the block's first tile (plan.carry added).
ir::Expr carried(const LoopPlan& plan, const ir::Expr& iter);

// The mbarrier protocol around a loop's TMA producers and their readers, for iteration `iter`.
class MbarrierProtocol {
public:
    MbarrierProtocol(const LoopPlan& plan, LowerContext& ctx) : plan_(plan), ctx_(ctx) {}
    ir::Stmt claim(const ir::Expr& iter) const;    // thread 0: the version is free; the bytes to come
    ir::Stmt produce(const ir::Expr& iter) const;  // claim, in thread 0's branch
    ir::Stmt consume(const ir::Expr& iter) const;  // wait until the version is full
    ir::Stmt releaseDone(const ir::Expr& iter) const;  // the version the readers are done with
    ir::Stmt drain() const;                        // after the loop: the last gemm group and its version
    ir::Stmt release(const ir::Expr& iter) const;  // every consumer thread arrives on its version's empty

private:
    ir::Expr slot(const ir::Expr& iter) const;
    ir::Expr parity(const ir::Expr& iter) const;
    ir::Stmt releasePrevious(const ir::Expr& iter) const;
    const LoopPlan& plan_;
    LowerContext& ctx_;
};

// Cluster.cpp: whether a warp-specialised loop's blocks form clusters of the size the grid's
// `cluster` asks for (plan.tma.cluster, ctx.clusterSize; logged, warned where asked and
// impossible); what the kernel does without a loop that can (noteClusterUnused).
void planCluster(LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx);

// WgmmaInFlight.cpp
// (gives the cp.async stages of the gemm it keeps in flight one version more)
size_t chooseGroupInFlight(LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx);

// PingPong.cpp: whether the loop's consumer warpgroups take turns issuing its gemms (logged);
// the turn of a gemm item is GemmOp::withTurn, applied by instance(); the schedules put
// pingPongEnter before the loop's code and pingPongLeave after it.
PingPongPlan choosePingPong(const LoopPlan& plan, PipelinedKernel& kernel, LowerContext& ctx);
ir::Stmt pingPongEnter(const LoopPlan& plan, LowerContext& ctx);
ir::Stmt pingPongLeave(const LoopPlan& plan, LowerContext& ctx);

// Overlap.cpp: `overlap = true`: the second gemm a stage later (stages, positions and plan.last
// changed; logged, warned where it cannot), before the versions are planned; then every stage
// tile at the versions of the latest reader; the gemms' instances and waits for the schedule.
void planOverlap(LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx);
void equalizeOverlapVersions(LoopPlan& plan);
ir::Stmt overlapGemm(const LoopPlan& plan, const ir::Stmt& instance, size_t g, bool bothInStep);
ir::Stmt overlapWait(const LoopPlan& plan, size_t g, int64_t pending);

// Depth.cpp: where the loop's stages keep too few bytes in flight for the tensor cores' pace
// (the model in Depth.h), more stages: the items, versions and barriers of the plan redone for
// them, logged either way.
void deepenPipeline(LoopPlan& plan, const PipelinedKernel& kernel, StageInference& inference, LowerContext& ctx);
// The loop given `stages` stages: producers at 0, the rest at the last, one version per stage,
// numbered among the inferred loops for lowering's retry with fewer (unless `pinned`).
void restage(LoopPlan& plan, int stages, bool pinned, StageInference& inference);

// Unroll.cpp: how many k-tiles each wgmma group of the loop covers (plan.unroll), from the
// target's k_step_min_ns or the author's `unroll`, before the depth is chosen; then, once it
// is, the stages made a multiple of it (at least two groups' worth), or the unroll dropped,
// and the decision logged.
void chooseUnroll(LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx);
void settleUnroll(LoopPlan& plan, const PipelinedKernel& kernel, StageInference& inference, LowerContext& ctx);

// The schedules. Each returns the loop's replacement, with the allocations flattening hoisted
// out of the body declared again around it (a versioned buffer as versioned), and records what
// later passes and loops need: the buffers it versioned in kernel.versioned (whose declarations
// outside the loop PipelineLoops.cpp rewrites), mbarriers and what they synchronise in ctx.

// ModuloSchedule.cpp
ir::Stmt emitModuloSchedule(const LoopPlan& plan, PipelinedKernel& kernel, LowerContext& ctx);

// WarpSpecialize.cpp: the consumers' side replaces the loop; the producer's side waits in
// kernel.warpSpecialized until splitWarps splits the kernel's threads between the two.
std::map<const ir::For*, TopLevelLoop> topLevelLoops(const ir::Stmt& body, const ir::Var* tileVar);
bool chooseWarpSpecialization(const LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx);
ir::Stmt emitWarpSpecialized(const LoopPlan& plan, PipelinedKernel& kernel, LowerContext& ctx);
ir::Stmt splitWarps(const ir::Stmt& body, const WarpSpecialized& ws, LowerContext& ctx);

// UnrolledSteps.cpp: the schedules of a loop with plan.unroll > 1 (its items: TMA producers at
// stage 0 and the in-flight gemm at the last). unrolledSchedule is the prologue / steady state
// form's loop (emitModuloSchedule declares its buffers around it); unrolledConsumers the
// warp-specialised consumers' loop and drain.
ir::Stmt unrolledSchedule(const LoopPlan& plan, LowerContext& ctx);
ir::Stmt unrolledConsumers(const LoopPlan& plan, const MbarrierProtocol& mbarriers, LowerContext& ctx);

// Persistent.cpp: a warp-specialised loop in a persistent kernel's loop over tiles. Why its
// versions and mbarrier phases cannot run on from tile to tile (empty: they can); planCarry
// sets plan.carry (and the consumers' named barrier) and logs it; the producer's loop wrapped
// in its own loop over the same tiles.
std::string carryIssue(const LoopPlan& plan, const PipelinedKernel& kernel);
void planCarry(LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx);
ir::Stmt producerOverTiles(const LoopPlan& plan, const TopLevelLoop& top, const ir::Stmt& loop,
                           const std::vector<OuterLet>& lets);

// RegisterPrefetch.cpp: nothing, and `why` says why, where the loop does not suit it.
ir::Stmt prefetchThroughRegisters(const LoopPlan& plan, const PipelinedKernel& kernel, LowerContext& ctx,
                                  std::string& why);

} // namespace tlc::pipeline

// `for (i, j) in parallel(M, N) { ... }`: element-wise code over a tile. The iterations follow
// the layout of the fragment the loop works on (its "domain"): each thread runs the
// iterations of the elements it holds, so fragment accesses stay in registers. Loops that
// touch no fragment spread their iterations evenly over the threads. Global accesses are
// bounds-checked: reads past the end give zero, writes past it are dropped.
#pragma once

#include "layout/Fragment.h"
#include "ops/LowerContext.h"

#include <map>
#include <optional>
#include <vector>

namespace tlc::ops {

struct ParallelNest {
    std::vector<ir::VarPtr> vars;
    std::vector<int64_t> extents;
    ir::Stmt body;
    SourceLoc loc;
};

// The perfectly nested parallel loops starting at `outer`; nullopt if an extent is symbolic.
std::optional<ParallelNest> parallelNest(const ir::For* outer);

struct FragmentAccess {
    ir::Buffer buffer;
    std::vector<ir::Expr> indices;
    bool isStore;
};
std::vector<FragmentAccess> fragmentAccesses(const ir::Stmt& body);

// The loop dimensions an access indexes with the bare loop variables, in order (x[i] in a loop
// over (i, j) gives {0}); nullopt for any other index expression.
std::optional<std::vector<size_t>> directDims(const FragmentAccess& a, const ParallelNest& nest);

// How one index of a fragment access inside a parallel loop depends on the iteration:
//   Loop   a loop variable, `var` or `var / divisor` (divisor a positive constant)
//   Free   no loop variable at all (a serial loop's variable, a per-block value): every
//          iteration may read any element along this dimension
//   Other  anything else (`j + 1`, `i * 2`, a let of a loop variable): the element may be held
//          by another thread
struct IndexUse {
    enum class Kind { Loop, Free, Other } kind = Kind::Other;
    size_t dim = 0;
    int64_t divisor = 1;
};
std::vector<IndexUse> indexUses(const FragmentAccess& a, const ParallelNest& nest);

// The layout a fragment must have for this access to read registers of the thread that runs
// the iteration, given the loop's domain layout; nullopt when no layout can (an Other index,
// loop dimensions out of order, a divisor that does not split the domain's lowest digit).
std::optional<layout::Fragment> layoutForAccess(const FragmentAccess& a, const ParallelNest& nest,
                                                const layout::Fragment& domain);

// The layout the loop's iterations follow: that of a fragment indexed by all the loop
// variables, else the default layout of the loop's shape when it touches fragments at all.
std::optional<layout::Fragment> domainOf(const ParallelNest& nest,
                                         const std::map<const ir::BufferNode*, layout::Fragment>& layouts,
                                         int64_t threads);

ir::Stmt lowerParallel(LowerContext& ctx, const ParallelNest& nest);

// What lowerParallel made of a loop over its domain's slots, for the vector form below: the
// slot variable, the loop variables' values at a slot, the simplifier's bounds there, the
// writing replica, the loop's range over its domain, and the rewritten body of one iteration.
struct VectorStoreLoop {
    const layout::Fragment& domain;
    ir::VarPtr slot;
    std::vector<std::pair<ir::VarPtr, ir::Expr>> binding;
    ir::VarBounds bounds;
    ir::Expr writer, inRange;
    ir::Stmt body;
};
// The loop as groups of consecutive slots, each one vector store or vector atomic add into the
// global tensor its body stores to (VectorStores.cpp); nothing when the loop is not one such
// store, the layout gives no group or the tensor takes no vector (vectorWidthFor).
std::optional<ir::Stmt> lowerVectorStores(LowerContext& ctx, const ParallelNest& nest, const VectorStoreLoop& loop);

// Row-major offset of `idx` in a buffer of constant shape.
ir::Expr flatIndex(const ir::Buffer& b, const std::vector<ir::Expr>& idx);
// Every element of `fragment` into `shared` (its elements row-major) by the threads that hold
// them, between barriers: for reads of elements another thread holds.
ir::Stmt stageToShared(LowerContext& ctx, const ir::Buffer& fragment, const ir::Buffer& shared, SourceLoc loc);
// The reverse, without barriers: every thread (replicas too) loads the elements it holds.
ir::Stmt loadFromShared(LowerContext& ctx, const ir::Buffer& fragment, const ir::Buffer& shared);

} // namespace tlc::ops

// Building blocks shared by the tile ops' lowerings: mapping tile offsets into regions, bounds
// predicates for regions that run past a tensor's end, loops that spread a tile's elements
// over the threads, and loops over the slots of a fragment.
#pragma once

#include "ir/TileOp.h"
#include "ops/LowerContext.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tlc::ops {

// The dimensions of a region that are not 1 (the tile's own dimensions).
std::vector<size_t> tileDims(const ir::Region& r);
// A gemm operand's two matrix dimensions, as sema reads it: its non-unit dimensions when there
// are two, else (a tile of one row or column: block_M = 1) those filled up with its trailing
// unit dimensions. matrixIndices places a (row, column) offset in them.
std::vector<size_t> matrixDims(const ir::Region& r);
std::vector<int64_t> matrixExtents(const ir::Region& r);
std::vector<ir::Expr> matrixIndices(const ir::Region& r, const std::vector<ir::Expr>& rowCol);

// The constant shape of r's buffer when r covers the whole of its buffer's last two dimensions
// and one element of every other (a shared tile as the bank-conflict cost sees it, indices over
// the buffer with leading dimensions at 0); nothing otherwise.
std::optional<std::vector<int64_t>> trailingTileShape(const ir::Region& r);

// Full-rank indices into the region's buffer for offsets over its tile dimensions.
std::vector<ir::Expr> regionIndices(const ir::Region& r, const std::vector<ir::Expr>& tileOffsets);

// `indices` lie inside the buffer (only dimensions that can overflow are tested; global
// buffers only — on-chip buffers are always exactly the tile). True when nothing to test.
ir::Expr inBounds(const ir::Buffer& b, const std::vector<ir::Expr>& indices, int64_t lanes = 1);

// The whole region lies inside its buffer (its last element does: starts are not negative).
// True for on-chip buffers.
ir::Expr tileInside(const ir::Region& r);

// A tile of a tensor whose rows are contiguous there: the tensor's last stride is 1 and the
// tile's last dimension is the tensor's last (the cpu passes that read such rows whole).
bool contiguousTensorRows(const ir::Region& r);

// The indices are exactly the variables `vars`, one each, in order (a loop nest's element).
bool indicesAre(const std::vector<ir::Expr>& indices, const std::vector<ir::VarPtr>& vars);

// Every load of `b` in e is at exactly the variables `at` (a loop's element), or, with `at`
// null, e loads nothing of `b`.
bool loadsOnlyAt(const ir::Expr& e, const ir::BufferNode* b, const std::vector<ir::VarPtr>* at);

// The most elements of `elemBytes` each, at most 16 bytes and a power of two, that divide
// `inner`: the vector a move of rows of `inner` elements takes where nothing else limits it.
int64_t widestVector(int64_t inner, int64_t elemBytes);

// The widest vector (elements) a move of a tile with innermost extent `inner` can use on this
// region: the last dimension must be contiguous and the start a known multiple. Symbolic
// strides become launch checks (recorded in ctx).
int64_t vectorWidthFor(LowerContext& ctx, const ir::Region& r, int64_t inner, DType moveType);

// Where a run of consecutive `v` starts in an index of the form `v`, `s + v` or `v + s` (s free
// of v): s, or 0 for `v` alone. Null for any other form (a vector move along v needs one).
ir::Expr startAlong(const ir::Expr& index, const ir::Var* v);

using OffsetsBody = std::function<ir::Stmt(const std::vector<ir::Expr>& offsets)>;
// Spreads the elements of a tile of `extents` over the block's threads, `vec` consecutive
// elements of the last dimension at a time: body gets the tile offsets of a vector's first
// element. Offsets are bound to named variables (names[i] for dimension i).
// `vars`, when given, are the offset variables themselves (a parallel loop's own). `rolled`: the
// body indexes no register array by the offsets, so on GPUs the loop is left for the compiler
// to unroll as it sees fit instead of whole (ForKind::Serial, not slotLoopKind()). `batch` > 0:
// where a thread has more iterations than that (a multiple of it), they run in unrolled batches
// of `batch` inside a rolled loop, bounding the moves in flight.
ir::Stmt distributedLoop(LowerContext& ctx, const std::vector<int64_t>& extents, int64_t vec,
                         const std::vector<std::string>& names, const OffsetsBody& body,
                         const std::vector<ir::VarPtr>& vars = {}, bool rolled = false, int64_t batch = 0);

// The same loop run by every thread over the whole tile: for tiles a thread keeps to itself
// (alloc_local buffers), which each thread fills and reads whole.
ir::Stmt perThreadLoop(LowerContext& ctx, const std::vector<int64_t>& extents, int64_t vec,
                       const std::vector<std::string>& names, const OffsetsBody& body);

// A fragment of the cpu target: one thread holds the whole tile, row-major (its slots are the
// row-major offsets of its elements), so that loops over it can be plain nests.
bool isCpuTile(const LowerContext& ctx, const layout::Fragment& f);

using SlotBody = std::function<ir::Stmt(const ir::Expr& slot, const std::vector<ir::Expr>& indices)>;
// Visits the slots a thread holds of a fragment, `vec` consecutive slots at a time; body gets
// the first slot and the fragment indices of its element.
ir::Stmt fragmentLoop(LowerContext& ctx, const layout::Fragment& f, int64_t vec, const std::vector<std::string>& names,
                      const SlotBody& body);

// dst[dstIdx..+lanes] = src[srcIdx..+lanes], converting element types; lanes > 1 becomes one
// vector move when the types agree. `valid` (may be null) guards the source: where false, zero
// is written instead.
ir::Stmt moveElements(const ir::Buffer& dst, const std::vector<ir::Expr>& dstIdx, const ir::Buffer& src,
                      const std::vector<ir::Expr>& srcIdx, int64_t lanes, const ir::Expr& valid = {});

// Index vector with `delta` added to the last index.
std::vector<ir::Expr> offsetLast(std::vector<ir::Expr> idx, int64_t delta);

// Loop variable names for a rank: i, j, k, then i3, i4...
std::vector<std::string> indexNames(size_t rank);

} // namespace tlc::ops

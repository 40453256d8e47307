// Parallel loops that fill one fragment element by element, for the cpu passes that compute
// such a loop inside the tile op after it (fuse-reductions, fuse-tile-stores) instead of
// writing the whole tile for that op to read back.
#pragma once

#include "ir/Simplify.h"
#include "ir/Stmt.h"
#include "ops/ElementProducer.h"
#include "ops/parallel/Parallel.h"

#include <optional>
#include <set>

namespace tlc {

struct ElementLoop {
    ops::ParallelNest nest;
    ir::Buffer tile;  // the fragment it fills, whole, at the loop's own indices
    ir::Expr value;   // what it stores at (nest.vars), the `let`s before the store folded in

    // The loop as the producer of the op after it (`stores`: the tile is written too).
    ops::ElementProducer producer(bool stores) const;
};

// The loop `s` is when it has that form: perfectly nested parallel loops around one plain
// store into a fragment at exactly the loops' variables, whose value reads fragments (the
// tile itself only at the element it writes) and tensors outside `written` at indices inside
// them for every value of the variables (forward-copies leaves rmsnorm's `w[j]` as `W[j]`), so
// that the value needs no bounds test wherever the fused op computes it.
std::optional<ElementLoop> elementLoop(const ir::Stmt& s, const std::set<const ir::BufferNode*>& written,
                                       const ir::VarBounds& bounds);

} // namespace tlc

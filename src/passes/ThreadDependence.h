// What of the expert level's code differs between the threads of a block: the thread index,
// lets computed from it, per-thread buffers (vars and alloc_local arrays that thread-dependent
// code writes) and collectives' results. Used by serialize-threads (what becomes per-thread
// arrays on the CPU) and insert-barriers (no barrier inside a branch only some threads take).
#pragma once

#include "ir/Stmt.h"

#include <set>
#include <string>

namespace tlc {

// A shuffle or warp reduction (the names irgen gives them).
bool isCollective(const std::string& name);
// A block reduction (block_reduce_sum/max/min), which lower-thread-level expands.
bool isBlockReduce(const std::string& name);
// The combining step of a reduction named `*_sum`, `*_max` or `*_min`.
ir::Expr combineReduction(const std::string& reduction, ir::Expr a, ir::Expr b);

// Whether `s` holds a point every thread of the block must reach together: a barrier, a tile
// op, a tile-level loop, a collective or sync_warp.
bool hasSplit(const ir::Stmt& s);

class ThreadDependence {
public:
    // Analyses `body` (to a fixed point: a buffer written from a per-thread buffer is one too).
    ThreadDependence(const ir::Stmt& body, const ir::Var* threadIndex);

    // Whether `e` may differ between threads.
    bool varies(const ir::Expr& e) const;
    // Local buffers thread-dependent code writes: one copy per thread.
    const std::set<const ir::BufferNode*>& perThreadBuffers() const { return buffers_; }

private:
    friend class ThreadDependenceFinder;
    const ir::Var* tx_;
    std::set<const ir::BufferNode*> buffers_;
    std::set<const ir::Var*> vars_;
};

} // namespace tlc

// What each `auto` parameter of a kernel is for, and so which values the recommender tries for
// it (docs/recommend.md, "`auto` parameters and their candidates"): read from its uses in the
// kernel as written, then from its name.
#pragma once

#include "target/Target.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tlc {

namespace ast { struct Kernel; }

enum class AutoRole {
    GemmTile,    // sizes a buffer that a gemm reads or writes: whole matrix-instruction tiles
    TileExtent,  // any other tile extent (rows of a norm, a vector's length, ...)
    Split,       // how many parts the work is split into (split-K, split-KV)
    Stages,      // a pipeline's depth
    Threads,     // a block's threads
    ThreadDim,   // one dimension of a block's threads (`threads = (reduce_thread, n_partition)`)
    Persistent,  // grid(..., persistent = p): 0 or 1, a launch of one block per tile or a persistent one
    SplitK,      // grid(..., split_k = s): the blocks each tile's k-loop is split over
    Cluster,     // grid(..., cluster = c): blocks per thread-block cluster (1 where the target has none)
};
const char* autoRoleName(AutoRole r);

// The role of the `auto` parameter `name` of `kernel` (as parsed).
AutoRole autoRoleOf(const ast::Kernel& kernel, const std::string& name);

// The compile-time parameters of `kernel` written with a value that the recommender could
// choose instead: named alone in a `stages =`, `threads =`, `split_k =`, `persistent =` or
// `cluster =` argument, or in an allocation's shape, and in no tensor parameter's dimensions
// (a head dim or a group count is the problem's, not a tile's). In declaration order.
std::vector<std::string> tunableParams(const ast::Kernel& kernel);

// The values tried for a parameter of that role on `target`, ascending.
std::vector<int64_t> autoCandidates(AutoRole role, const Target& target);

} // namespace tlc

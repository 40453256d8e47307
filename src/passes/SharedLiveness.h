// Live ranges of shared buffers, for plan-shared-memory (which gives buffers whose ranges do
// not overlap the same bytes) and for lower-tile-ops (which tells ops how much shared memory
// is free around them).
//
// Statements are numbered in preorder (every node, Seqs and loops included, gets the next
// number when it is entered), so a statement covers the numbers [position, position + size).
// A buffer is live from its first to its last use; a use inside a loop makes it live for the
// whole of the outermost loop around the use (the next iteration comes back to it). Works on
// tile IR (a tile op uses the buffers of its regions) and on thread IR alike.
#pragma once

#include "ir/Stmt.h"
#include "ops/LowerContext.h"

#include <map>
#include <set>
#include <vector>

namespace tlc {

struct SharedLife {
    ir::Buffer buffer;  // the allocation (views with its name are folded into it)
    int first = 0, last = 0;
    SourceLoc firstLoc, lastLoc;  // the statements at first and last, for --emit=shared
    SourceLoc useLoc;             // the statement of the first use itself (inside a loop: not the loop)
    bool overlaps(const SharedLife& o) const { return first <= o.last && o.first <= last; }
};

struct BarrierSite {
    int position = 0;
    int regionFirst = 0, regionLast = 0;  // the innermost loop body or if branch around it
};

struct SharedLiveness {
    std::vector<SharedLife> buffers;  // used shared buffers, in allocation order
    std::vector<BarrierSite> barriers;
    std::map<const ir::StmtNode*, std::vector<int>> tileOps;  // tile-op statement -> its positions
    std::vector<SourceLoc> locs;  // by position: the statement's line, or the last one named before it
    int size = 0;                                             // statements numbered

    // True when a barrier that every thread reaches lies strictly between positions a < b.
    bool barrierBetween(int a, int b) const;
};

// `transient`: names of buffers live only at their uses even inside loops (transient scratch,
// LowerContext::scratch).
SharedLiveness sharedLiveness(const ir::Stmt& body, const std::set<std::string>& transient = {});

// Offsets in one pool: first fit, largest buffers first (ties in allocation order), each at the
// lowest multiple of its alignment where it meets no placed buffer whose live range overlaps
// its own. Without reuse every buffer gets bytes of its own.
struct Placement {
    std::vector<int64_t> offsets;  // by index into the buffers
    int64_t total = 0;
};
Placement placeBuffers(const std::vector<SharedLife>& buffers, const std::vector<int64_t>& bytes,
                       const std::vector<int64_t>& aligns, bool reuse);

// Where the most bytes are live at once: the first position of the largest sum of the bytes of
// the buffers live there, those buffers (indices into `buffers`, largest first) and their sum.
// The pool is at least that large (alignment and fragmentation may add to it); errors about the
// pool's size name these buffers.
struct SharedPeak {
    int position = -1;
    SourceLoc loc;
    int64_t bytes = 0;
    std::vector<size_t> buffers;
};
SharedPeak sharedPeak(const SharedLiveness& live, const std::vector<int64_t>& bytes);

// The pool plan-shared-memory would make for a tile-level body before lowering: the same live
// ranges and placement, each shared buffer's bytes times its versions (`versions`: the
// producers of a pipelined loop, by allocation; 1 when absent), 16-byte alignment (swizzles
// are chosen later). Stage inference and the recommender use it; the compiler's scratch
// buffers are not known yet, so plan-shared-memory checks the exact pool after lowering.
int64_t plannedSharedBytes(const ir::Stmt& body, const std::map<const ir::BufferNode*, int>& versions, bool reuse);

// Bytes of a shared buffer (0 for symbolic shapes), and where it must start: 16 bytes, or what
// its swizzle needs (Swizzle::baseAlignment).
int64_t sharedBufferBytes(const ir::Buffer& b);
int64_t sharedAlignment(const ir::Buffer& b, const LowerContext& ctx);

// For each tile-op statement of a tile-level body: the bytes of shared memory an op there may
// add without raising the block's peak (the peak of a plan of the body, less what is live
// there). An op that appears at several places gets the least.
std::map<const ir::StmtNode*, int64_t> sharedHeadroom(const ir::Stmt& body, const LowerContext& ctx);

// The number of statement nodes in s (what the preorder numbering gives it).
int statementCount(const ir::Stmt& s);

} // namespace tlc

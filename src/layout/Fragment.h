// Fragment layouts: how the elements of a register tile are spread over a block's threads.
//
// Every index of a fragment is a sum of terms, each term a counter times a scale. A counter is
// either a thread coordinate, `(tx / stride) % extent`, or a local counter, `(l / stride) %
// extent` of the per-thread element number l. This one form describes the plain SIMT layouts
// used here and the tensor-core layouts (mma, wgmma, mfma) alike: an mma accumulator's row is
// `lane / 4 + 8 * r`, a term on a thread coordinate plus one on a local counter.
//
// Thread coordinates that no index uses are replication: those threads hold copies.
#pragma once

#include "ir/Expr.h"

#include <optional>
#include <string>
#include <vector>

namespace tlc::layout {

struct Term {
    bool onThread;   // thread coordinate, else local counter
    int64_t stride;  // of tx (thread) or of the local element number (local)
    int64_t extent;  // the counter's range
    int64_t scale;   // its weight in the index
    friend bool operator==(const Term&, const Term&) = default;
};

class Fragment {
public:
    Fragment() = default;
    Fragment(std::vector<int64_t> shape, int64_t threads, int64_t locals, std::vector<std::vector<Term>> dims);

    const std::vector<int64_t>& shape() const { return shape_; }
    int64_t threads() const { return threads_; }
    int64_t locals() const { return locals_; }  // elements each thread holds
    const std::vector<std::vector<Term>>& dims() const { return dims_; }
    size_t rank() const { return shape_.size(); }

    // The element a thread holds in local slot `local`.
    std::vector<ir::Expr> indicesAt(const ir::Expr& tx, const ir::Expr& local) const;
    // The same with numbers: the element thread tx holds in slot `local`; and the inverse, the
    // thread (replica 0) and slot that hold the element at `indices`.
    std::vector<int64_t> elementAt(int64_t tx, int64_t local) const;
    std::pair<int64_t, int64_t> holderOf(const std::vector<int64_t>& indices) const;
    // The local slot of the element at `indices`, valid in the threads that own it.
    ir::Expr localOf(const std::vector<ir::Expr>& indices) const;
    // Whether thread tx holds the element at `indices` (a boolean expression).
    ir::Expr ownedBy(const std::vector<ir::Expr>& indices, const ir::Expr& tx) const;
    // The replica number of thread tx (0 for exactly one holder of each element).
    ir::Expr replicaOf(const ir::Expr& tx) const;
    int64_t replicas() const;

    // The layout of a fragment holding only dimensions `keep` (a reduction's result, or a
    // vector indexed by some of a parallel loop's variables).
    Fragment project(const std::vector<size_t>& keep) const;
    // The same placement for a buffer of `shape`, which has this fragment's dimensions other
    // than 1, in order, and any number of dimensions of extent 1 (a reduction's destination
    // that keeps the reduced dimension: [1, N] for a [M, N] source reduced along 0). Nothing
    // when the dimensions other than 1 differ.
    std::optional<Fragment> withUnitDims(const std::vector<int64_t>& shape) const;
    // The layout of a fragment of `shape` read by the iterations this one describes, where
    // dimension d of `shape` is this fragment's dimension from[d], or, when from[d] is
    // nullopt, indexed by a value every iteration may choose (a serial loop's variable, a
    // per-block scalar): such dimensions are held whole by every thread, in further slots.
    Fragment widen(const std::vector<int64_t>& shape, const std::vector<std::optional<size_t>>& from) const;
    // The layout of `x[.., i / c, ..]` read by the iterations of this fragment over dimension
    // `dim`: the digits below c are dropped (slots or threads that then hold the same element:
    // the slots merge, the threads become replicas). Nothing when the lowest digit of `dim`
    // does not divide by c.
    std::optional<Fragment> divided(size_t dim, int64_t c) const;

    // `times` copies of this fragment side by side along dimension `dim`: held by each thread
    // in further local slots (the copies' slots follow this fragment's), or, onThreads, by
    // `times` groups of this fragment's threads (threads grow to threads * times).
    Fragment repeat(size_t dim, int64_t times, bool onThreads) const;
    // The same placement on a block of `threads` (a multiple of this one's): the extra threads
    // hold replicas.
    Fragment onBlockOf(int64_t threads) const;

    // Elements consecutive along the last dimension in consecutive local slots: the vector
    // width available for moves between this fragment and memory.
    int64_t vectorWidth() const;

    // Same placement of every element (replication included).
    bool sameAs(const Fragment& other) const;
    // The same, dimensions of extent 1 aside (a full reduction's [] result and a [1] buffer).
    bool samePlacement(const Fragment& other) const;
    // Every thread holds every element.
    bool isReplicated() const;
    // True when each element is held exactly once per replica and no slot is wasted.
    bool isBijective() const;

    std::string str() const;  // "[128, 32] over 128 threads: dim0 = tx%4 + 4*l/8 ..."

private:
    std::vector<int64_t> shape_;
    int64_t threads_ = 1;
    int64_t locals_ = 1;
    std::vector<std::vector<Term>> dims_;
};

// The plain SIMT layout for a fragment of `shape` on `threads` threads: the last dimension
// spread over tx % tc in vectors of up to `maxVector` elements, the rows (dimension rank-2, or
// 0 for vectors) over (tx / tc) % tr, the rest local. tr and tc depend only on the row count
// and the threads, so that every fragment with the same rows agrees. A vector on its own is
// spread over all threads in vectors; inference gives vectors that belong to tiles their
// tile's rows instead.
Fragment defaultFragment(const std::vector<int64_t>& shape, int64_t threads, int64_t maxVector = 4);

// The placement of a [rows, cols] tile that `threads` threads move in vectors of `vec` elements,
// consecutive threads on consecutive vectors in row-major order (a memory-to-memory copy's
// split): what a tile staged in registers on its way to shared memory holds. Nothing when the
// row's vectors and the threads do not tile each other.
std::optional<Fragment> rowMajorCopyFragment(const std::vector<int64_t>& shape, int64_t threads, int64_t vec);

// Every thread holds the whole fragment (row-major in its slots): for small fragments read
// outside parallel loops (a mask, a per-block scalar), where every thread needs every element.
Fragment replicatedFragment(const std::vector<int64_t>& shape, int64_t threads);

} // namespace tlc::layout

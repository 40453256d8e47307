// tl_cpu_gemm_common.h -- what the CPU gemm's forms (tl_cpu_gemm_fma.h, tl_cpu_gemm_dot.h,
// tl_cpu_gemm_amx.h; the entry, tl::gemm_tile, is tl_cpu_gemm.h) share: per-thread scratch,
// packed tiles of B kept across a launch's blocks, L2 prefetch hints, A converted to f32.
// Sections: see tl_common.h.
#pragma once

// tlc:section gemm_common
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>
namespace tl {
// gemm on the CPU: C[M][N] += op(A)[M][K] * op(B)[K][N] on tiles a block holds, with f32
// accumulators. A[m][k] is a[m * lda + k] (TransA: a[k * lda + m]); B[k][n] is b[k * ldb + n]
// (TransB: b[n * ldb + k]); C is row-major with row stride ldc.
//
// The tile is cut into register blocks of MR rows x NR columns whose accumulators stay in
// vector registers for the whole K loop: each step loads NR columns of one row of B and
// multiplies them by MR broadcast elements of A (the GotoBLAS micro-kernel, without its
// packing of A: the tiles are already small and in place). B is packed (and converted to f32)
// into column panels; A is converted to f32 when it is not. The vector width comes
// from the compiler's flags (-mavx512f, -mavx2 -mfma, or none: plain loops).
namespace cpu_gemm {

// Storage for `count` elements that each thread keeps between calls (packed and converted
// tiles); Slot tells apart the buffers one call uses at the same time.
template <typename T, int Slot>
inline T* scratch(size_t count) {
    static thread_local std::vector<T> storage;
    if (storage.size() < count) storage.resize(count);
    return storage.data();
}

// Packed tiles of B kept across the blocks of one launch (gemm_tile_reused_b). Blocks that
// share B's tiles run one after another on a thread (the launcher orders the grid so), so B
// is packed once per thread and launch instead of once per block. A tile is known by where
// it starts, its row stride, shape and form; each launcher that reuses tiles first calls
// new_launch(), so that nothing packed before (the tensor may have changed) is found again.
// The lowering reuses tiles only of tensors the kernel never writes.
inline std::atomic<unsigned>& launch_generation() {
    static std::atomic<unsigned> generation{0};
    return generation;
}
inline void new_launch() { launch_generation().fetch_add(1, std::memory_order_relaxed); }

template <typename T>
struct ReusedTile {
    T* data;
    std::int32_t* sums;  // per column, for the forms that keep them (vpdpbusd's offset)
    bool packed;         // holds the tile already: nothing to pack
};

// The thread's entry for a tile: the one it packed earlier in this launch, else the least
// recently used (entries from earlier launches first), at most 64 of them and 8 MB a thread.
template <typename T>
inline ReusedTile<T> reused_tile(const void* src, int ld, int rows, int cols, int form, size_t sums) {
    struct Entry {
        const void* src = nullptr;
        int ld = 0, rows = 0, cols = 0, form = 0;
        unsigned generation = 0;
        unsigned long long used = 0;
        std::vector<T> data;
        std::vector<std::int32_t> sums;
    };
    static thread_local std::vector<Entry> entries;
    static thread_local unsigned long long clock = 0;
    const unsigned generation = launch_generation().load(std::memory_order_relaxed);
    const size_t count = static_cast<size_t>(rows) * cols;
    ++clock;
    Entry* victim = nullptr;
    auto age = [&](const Entry& e) {  // entries of earlier launches go first, then the least recent
        return e.generation == generation ? e.used : 0;
    };
    for (Entry& e : entries) {
        if (e.generation == generation && e.src == src && e.ld == ld && e.rows == rows && e.cols == cols &&
            e.form == form) {
            e.used = clock;
            return {e.data.data(), e.sums.data(), true};
        }
        if (!victim || age(e) < age(*victim)) victim = &e;
    }
    const size_t budget = (size_t(8) << 20) / (count * sizeof(T) + 1);
    if (!victim || (entries.size() < 64 && entries.size() < budget)) {
        entries.emplace_back();
        victim = &entries.back();
    }
    *victim = Entry{src, ld, rows, cols, form, generation, clock, std::move(victim->data), std::move(victim->sums)};
    victim->data.resize(count);
    victim->sums.resize(sums);
    return {victim->data.data(), victim->sums.data(), false};
}

// The caller's next k-step reads the tile K steps further along k (the usual loop walks K in
// order); its lines are asked into L2 (prefetcht1) while this step computes. The rows of a tile
// read in place are a row stride apart, a 4 KB page each, which the hardware prefetchers do not
// cross: without the hint every row's first lines wait for memory. Spread over the work: A's
// by the register blocks, B's by its packing one k at a time (a burst of a whole f32 tile's
// lines at the call's start measured slower; the dot-product and AMX forms, which pack several
// k at a time, ask for a panel's lines before packing it). A hint never faults, also past the
// tensor's end; the address is computed as an integer, so that no pointer leaves its array.
template <typename T>
inline void prefetch_l2(const T* p, long long offset) {
#if defined(__GNUC__)
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(p) +
                                                     std::uintptr_t(offset * long(sizeof(T)))),
                       0, 2);
#else
    (void)p, (void)offset;
#endif
}

// Row `row` of a row-major tile `k_steps` wide: its next k-step's lines.
template <typename T>
inline void prefetch_next_k_step_row(const T* p, int ld, int row, int k_steps) {
    for (int k = 0; k < k_steps; k += 64 / int(sizeof(T))) prefetch_l2(p, (long long)row * ld + k_steps + k);
}

// Step k's share of B's next k-step, for a loop that packs columns [j0, j0 + cols) of B's
// [K][N] tile one k at a time: row K + k of those columns, or (TransB: k contiguous) at every
// 64 bytes of k, each column's line there.
template <int K, int TransB, typename T>
inline void prefetch_next_k_step(const T* b, int ldb, int k, int j0, int cols) {
    constexpr int line = 64 / sizeof(T);
    if constexpr (!TransB) {
        for (int j = 0; j < cols; j += line) prefetch_l2(b, (long long)(K + k) * ldb + j0 + j);
    } else if (k % line == 0) {
        for (int j = 0; j < cols; ++j) prefetch_l2(b, (long long)(j0 + j) * ldb + K + k);
    }
}

// A tile of A converted to f32, row-major (a row-major source: the next k-step's lines asked
// for, row by row).
template <typename T>
inline const float* as_f32(const T* src, int ld, int rows, int cols, bool transposed) {
    float* out = scratch<float, 0>(static_cast<size_t>(rows) * cols);
    for (int r = 0; r < rows; ++r) {
        if (!transposed) prefetch_next_k_step_row(src, ld, r, cols);
        for (int c = 0; c < cols; ++c)
            out[static_cast<size_t>(r) * cols + c] = static_cast<float>(transposed ? src[c * ld + r] : src[r * ld + c]);
    }
    return out;
}
} // namespace cpu_gemm
} // namespace tl
// tlc:end

// tl_cpu.h -- helpers for tlc's C++/OpenMP output (one thread per block; blocks run in an
// OpenMP loop). The 16/8-bit float types live in tl_types.h. Sections: see tl_common.h.
#pragma once

#include "tl_common.h"
#include "tl_types.h"

// tlc:section status
namespace tl {
// What the CPU launchers return.
enum cpu_status : int {
    cpu_success = 0,
    cpu_error_invalid_value = 1,  // a launch check failed (sizes, alignment, 32-bit offsets)
    cpu_error_unsupported_cpu = 2,  // the running CPU lacks the instructions the target uses
};
} // namespace tl
// tlc:end

// tlc:section xtiledata
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
namespace tl {
// Linux gives AMX's tile state only to a process that asks for it (arch_prctl
// ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA = 18); the first tile instruction of one that did not
// dies of SIGILL. Asked once; true when granted.
inline bool request_xtiledata() {
#if defined(__linux__) && defined(__x86_64__)
    static const bool granted = syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18) == 0;
    return granted;
#else
    return false;
#endif
}
} // namespace tl
// tlc:end

// tlc:section vector_moves
#include <cstring>
namespace tl {
// A vector move of Bytes bytes (the GPU forms are one 128-bit access; here a memcpy that the
// compiler turns into one).
template <int Bytes>
inline void copy_vec(void* dst, const void* src) {
    std::memcpy(dst, src, Bytes);
}
template <int Bytes>
inline void fill_zero(void* dst) {
    std::memset(dst, 0, Bytes);
}
} // namespace tl
// tlc:end

// tlc:section streaming_stores
#include <cstddef>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#if defined(__unix__)
#include <unistd.h>
#endif
namespace tl {
// A launch's result of at least this many bytes is written past the caches (non-temporal
// stores, as memcpy does for large copies): a store that misses the cache first reads its line
// (write-allocate), a third stream beside the kernel's reads and writes, and a result larger
// than the last-level cache would only evict the inputs. Smaller results stay in the caches
// for whatever reads them next. The last-level cache's size as the system reports it, within
// 4..32 MiB (virtual machines report the whole socket's, or nothing).
inline long long streaming_threshold() {
    static const long long bytes = [] {
        long long l3 = 0;
#if defined(_SC_LEVEL3_CACHE_SIZE)
        l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
        if (l3 <= 0) l3 = 16LL << 20;
        return l3 < (4LL << 20) ? (4LL << 20) : (l3 > (32LL << 20) ? (32LL << 20) : l3);
    }();
    return bytes;
}
#if defined(__SSE2__)
// One 64-byte line from s (any alignment) to d (64-byte aligned) with non-temporal stores.
inline void stream_line(char* d, const char* s) {
#if defined(__AVX512F__)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d), _mm512_loadu_si512(s));
#elif defined(__AVX__)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s)));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 32), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32)));
#else
    for (int q = 0; q < 64; q += 16)
        _mm_stream_si128(reinterpret_cast<__m128i*>(d + q), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + q)));
#endif
}
#endif
// Copies `bytes` from src to dst with non-temporal stores where the CPU has them: the head up
// to dst's next 64-byte boundary and the tail by plain copies, whole cache lines between. The
// fence makes the lines visible to the other threads before the block's end.
inline void copy_streaming(void* dst, const void* src, std::size_t bytes) {
    char* d = static_cast<char*>(dst);
    const char* s = static_cast<const char*>(src);
#if defined(__SSE2__)
    std::size_t head = (64 - (reinterpret_cast<std::uintptr_t>(d) & 63)) & 63;
    if (head > bytes) head = bytes;
    std::memcpy(d, s, head);
    d += head, s += head, bytes -= head;
    for (; bytes >= 64; bytes -= 64, d += 64, s += 64) stream_line(d, s);
    std::memcpy(d, s, bytes);
    _mm_sfence();
#else
    std::memcpy(d, s, bytes);
#endif
}
// One row of a tile to a tensor: `count` elements, of a launch whose result is `result_bytes`.
template <typename T>
inline void store_row(T* dst, const T* src, int count, long long result_bytes) {
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
    if (result_bytes >= streaming_threshold()) {
        copy_streaming(dst, src, bytes);
    } else {
        std::memcpy(dst, src, bytes);
    }
}
// The elements of a row of `count` (at least 64 bytes) before its first 64-byte boundary: where
// its whole lines for store_line begin. 0 when p is not aligned to its element type.
template <typename T>
inline int line_head(const T* p, int count) {
    const unsigned offset = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p) & 63);
    if (offset % sizeof(T) != 0) return 0;
    const int head = static_cast<int>(((64 - offset) & 63) / sizeof(T));
    return head < count ? head : 0;
}
// Whether a launch whose result is `result_bytes` writes past the caches (store_line's `stream`).
inline bool streams(long long result_bytes) { return result_bytes >= streaming_threshold(); }
// One 64-byte cache line of values (64 / sizeof(T) elements, computed into `src`) to a tensor:
// a non-temporal store where `stream` says so and dst starts a line, a plain one otherwise.
// After a tile's lines, store_fence.
template <typename T>
inline void store_line(T* dst, const T* src, bool stream) {
#if defined(__SSE2__)
    if (stream && (reinterpret_cast<std::uintptr_t>(dst) & 63) == 0) {
        stream_line(reinterpret_cast<char*>(dst), reinterpret_cast<const char*>(src));
        return;
    }
#endif
    (void)stream;
    std::memcpy(dst, src, 64);
}
// Makes a tile's non-temporal stores visible to other threads (before the block ends).
inline void store_fence(bool stream) {
#if defined(__SSE2__)
    if (stream) _mm_sfence();
#else
    (void)stream;
#endif
}
} // namespace tl
// tlc:end

// tlc:section prefetch
namespace tl {
// Asks for the cache line holding p (a read, kept in every level): a hint that never faults.
inline void prefetch(const void* p) {
#if defined(__GNUC__)
    __builtin_prefetch(p, 0, 3);
#else
    (void)p;
#endif
}
} // namespace tl
// tlc:end

// tlc:section math
#include <cmath>
namespace tl {
inline float rsqrt(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
// exp and exp2 of floats without a library call, so that the C++ compiler vectorises the loops
// that use them (glibc's vector forms need -ffast-math). x = n ln2 + r with |r| <= ln2 / 2
// (n by the 1.5 * 2^23 shifter, r by a two-constant Cody-Waite), e^r by a degree-6 minimax
// polynomial (relative error 2.6e-9 before rounding), 2^n as two float scales built from n's
// bits in the shifted sum (so that the results below FLT_MIN come out subnormal, as std::exp
// gives them, and those above FLT_MAX infinite). Over every float at most 1.21 ulp from the
// exact value with FMA, 1.29 without (tests/runtime/check_exp.cpp); infinities, NaN, overflow
// and underflow as std::exp. 24 vector instructions per vector of results with AVX-512 (the
// degree-7 Taylor form with a float-to-int conversion before it took 37).
inline float mul_add(float a, float b, float c) {  // one rounding where the target has FMA
#if defined(__FMA__)
    return __builtin_fmaf(a, b, c);
#else
    return a * b + c;
#endif
}
template <typename T>  // float, or tl::f32x16 (found at instantiation with its mul_add)
inline T exp_reduced(T r) {  // e^r for |r| <= ln2 / 2
    T p = 1.406126772e-03f;
    p = mul_add(p, r, 8.379018866e-03f);
    p = mul_add(p, r, 4.166477546e-02f);
    p = mul_add(p, r, 1.666636467e-01f);
    p = mul_add(p, r, 5.000000596e-01f);
#if defined(__FMA__)
    return mul_add(mul_add(p, r, 1.0f), r, 1.0f);
#else
    return 1.0f + (r + r * r * p);  // without FMA the small terms first: one rounding next to 1
#endif
}
// p 2^n, where s = 1.5 * 2^23 + n (an integer n in -150..129 in s's low mantissa bits, as the
// shifter left it): 2^(b >> 1) and 2^(b - (b >> 1)) with b = n + 2 * 127, their exponent fields
// within 52..192 (normal floats, 2^-75..2^65), so that the product rounds once, to a subnormal
// or an infinity where the result is one.
inline float scale_pow2(float p, float s) {
    const int b = __builtin_bit_cast(int, s) - (0x4B400000 - 254);  // n + 254, in 104..383
    const int h = b >> 1;
    return p * __builtin_bit_cast(float, h << 23) * __builtin_bit_cast(float, (b - h) << 23);
}
inline float exp(float x) {
    const float c = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);  // NaN stays NaN
    const float s = mul_add(c, 1.44269504088896341f, 12582912.0f);  // 1.5 * 2^23 + round(c log2 e)
    const float n = s - 12582912.0f;
    const float r = mul_add(n, -1.428606765330187045e-06f, mul_add(n, -0.693145751953125f, c));
    return scale_pow2(exp_reduced(r), s);
}
inline float exp2(float x) {
    const float c = x < -150.0f ? -150.0f : (x > 129.0f ? 129.0f : x);
    const float s = c + 12582912.0f;
    return scale_pow2(exp_reduced((c - (s - 12582912.0f)) * 0.693147180559945309f), s);
}
// fmax and fmin as selects (NaN operands lose, as in std::fmax), which vectorise.
template <typename T> inline T fmax(T a, T b) { return (a >= b || b != b) ? a : b; }
template <typename T> inline T fmin(T a, T b) { return (a <= b || b != b) ? a : b; }
} // namespace tl
// tlc:end

// tlc:section f32x16 needs=tl_cpu.h:math
// Sixteen floats (a 64-byte line) as one AVX-512 register, for the 16-lane loops that call exp
// or exp2: the cpu output writes those twice, as straight-line code on these values under
// TL_CPU_F32X16 and as the loop otherwise. exp and exp2 are tl::exp's algorithm with vscalefps
// for the scaling by 2^n: 13 instructions, where the compiler's vector code of the scalar form
// takes 24; the same results, bit for bit.
#if defined(__AVX512F__)
#include <immintrin.h>
#endif
#if defined(__AVX512F__)
#define TL_CPU_F32X16 1
namespace tl {
struct f32x16 {
    __m512 v;
    f32x16(__m512 x) : v(x) {}
    f32x16(float x) : v(_mm512_set1_ps(x)) {}
};
inline f32x16 load_f32x16(const float* p) { return _mm512_loadu_ps(p); }
inline void store(float* p, f32x16 x) { _mm512_storeu_ps(p, x.v); }
inline f32x16 operator+(f32x16 a, f32x16 b) { return _mm512_add_ps(a.v, b.v); }
inline f32x16 operator-(f32x16 a, f32x16 b) { return _mm512_sub_ps(a.v, b.v); }
inline f32x16 operator*(f32x16 a, f32x16 b) { return _mm512_mul_ps(a.v, b.v); }
inline f32x16 operator/(f32x16 a, f32x16 b) { return _mm512_div_ps(a.v, b.v); }
inline f32x16 operator-(f32x16 a) { return _mm512_sub_ps(_mm512_setzero_ps(), a.v); }
inline f32x16 mul_add(f32x16 a, f32x16 b, f32x16 c) {  // rounded as the scalar mul_add
#if defined(__FMA__)
    return _mm512_fmadd_ps(a.v, b.v, c.v);
#else
    return a * b + c;
#endif
}
// Max, min and scalef in their zero-masking forms with every lane on: the same instructions,
// but g++ 12 warns (-Wuninitialized) on the plain forms' _mm512_undefined_ps.
constexpr __mmask16 all_lanes = 0xFFFF;
inline __m512 max_ps(__m512 a, __m512 b) { return _mm512_maskz_max_ps(all_lanes, a, b); }  // a > b ? a : b
inline __m512 min_ps(__m512 a, __m512 b) { return _mm512_maskz_min_ps(all_lanes, a, b); }  // a < b ? a : b
// As the scalar fmax/fmin: a where b is NaN, b where a is.
inline f32x16 fmax(f32x16 a, f32x16 b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, a.v, _CMP_UNORD_Q), max_ps(b.v, a.v), b.v);
}
inline f32x16 fmin(f32x16 a, f32x16 b) {
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a.v, a.v, _CMP_UNORD_Q), min_ps(b.v, a.v), b.v);
}
// tl::exp's steps (NaN passes the clamps: they return their second operand for it); vscalefps
// multiplies by 2^n with one rounding, as scale_pow2's two products do.
inline f32x16 exp(f32x16 x) {
    const f32x16 c = min_ps(_mm512_set1_ps(89.0f), max_ps(_mm512_set1_ps(-104.0f), x.v));
    const f32x16 n = mul_add(c, 1.44269504088896341f, 12582912.0f) - 12582912.0f;
    const f32x16 r = mul_add(n, -1.428606765330187045e-06f, mul_add(n, -0.693145751953125f, c));
    return _mm512_maskz_scalef_ps(all_lanes, exp_reduced(r).v, n.v);
}
inline f32x16 exp2(f32x16 x) {
    const f32x16 c = min_ps(_mm512_set1_ps(129.0f), max_ps(_mm512_set1_ps(-150.0f), x.v));
    const f32x16 n = (c + 12582912.0f) - 12582912.0f;
    return _mm512_maskz_scalef_ps(all_lanes, exp_reduced((c - n) * 0.693147180559945309f).v, n.v);
}
} // namespace tl
#endif
// tlc:end

// tlc:section dp4a
#include <cstdint>
namespace tl {
// CUDA's __dp4a: the four bytes of a times those of b (signed for int, unsigned for unsigned),
// summed into c.
inline int32_t dp4a(int32_t a, int32_t b, int32_t c) {
    for (int i = 0; i < 4; ++i) c += int32_t(int8_t(a >> (8 * i))) * int32_t(int8_t(b >> (8 * i)));
    return c;
}
inline uint32_t dp4a(uint32_t a, uint32_t b, uint32_t c) {
    for (int i = 0; i < 4; ++i) c += ((a >> (8 * i)) & 0xffu) * ((b >> (8 * i)) & 0xffu);
    return c;
}
} // namespace tl
// tlc:end

// tlc:section atomic_minmax
#include <cstring>
namespace tl {
// atomic_max/atomic_min of one element: a compare-and-swap loop on the element's bits (GCC's
// __atomic builtins; relaxed, as on the GPUs), for integers and floats alike.
template <typename T, typename Better> inline void atomic_update(T* address, T value, Better better) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomic min/max take 32- or 64-bit elements");
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    Bits* bits = reinterpret_cast<Bits*>(address);
    Bits seen = __atomic_load_n(bits, __ATOMIC_RELAXED), wanted;
    std::memcpy(&wanted, &value, sizeof value);
    for (;;) {
        T current;
        std::memcpy(&current, &seen, sizeof current);
        if (!better(value, current)) return;
        if (__atomic_compare_exchange_n(bits, &seen, wanted, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
    }
}
template <typename T, typename V> inline void atomic_max(T* address, V value) {
    atomic_update(address, static_cast<T>(value), [](T a, T b) { return a > b; });
}
template <typename T, typename V> inline void atomic_min(T* address, V value) {
    atomic_update(address, static_cast<T>(value), [](T a, T b) { return a < b; });
}
} // namespace tl
// tlc:end

// tlc:section narrow_atomic_add
#include <cstdint>
#include <cstring>
#include <type_traits>
namespace tl {
// Atomic add for 8- and 16-bit element types (tl::half, tl::bfloat16, fp8, small integers),
// which `#pragma omp atomic` does not cover: a compare-and-swap loop on the element.
template <typename T, typename V>
inline void atomic_add_narrow(T* address, V value) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2, "for 8- and 16-bit types");
    using Bits = typename std::conditional<sizeof(T) == 1, std::uint8_t, std::uint16_t>::type;
    Bits* bits = reinterpret_cast<Bits*>(address);
    Bits expected = __atomic_load_n(bits, __ATOMIC_RELAXED);
    for (;;) {
        T current;
        std::memcpy(&current, &expected, sizeof(T));
        T sum;
        if constexpr (std::is_integral<T>::value) sum = T(current + value);
        else sum = T(float(current) + float(value));
        Bits desired;
        std::memcpy(&desired, &sum, sizeof(T));
        if (__atomic_compare_exchange_n(bits, &expected, desired, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
    }
}
} // namespace tl
// tlc:end

// tlc:section gemm needs=tl_types.h:bfloat16
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>  // x86 only: the portable form must build on any CPU
#endif
#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>
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

#if defined(__AVX512F__)
using vec = __m512;
constexpr int lanes = 16, accumulators = 24, max_vectors = 4;  // of the 32 zmm registers
inline vec load(const float* p) { return _mm512_loadu_ps(p); }
inline void store(float* p, vec v) { _mm512_storeu_ps(p, v); }
inline vec broadcast(float x) { return _mm512_set1_ps(x); }
inline vec fma(vec a, vec b, vec c) { return _mm512_fmadd_ps(a, b, c); }
#elif defined(__AVX2__) && defined(__FMA__)
using vec = __m256;
constexpr int lanes = 8, accumulators = 12, max_vectors = 2;  // of the 16 ymm registers
inline vec load(const float* p) { return _mm256_loadu_ps(p); }
inline void store(float* p, vec v) { _mm256_storeu_ps(p, v); }
inline vec broadcast(float x) { return _mm256_set1_ps(x); }
inline vec fma(vec a, vec b, vec c) { return _mm256_fmadd_ps(a, b, c); }
#else
constexpr int lanes = 0, accumulators = 0, max_vectors = 0;  // no vector form: plain loops only
#endif

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
// One register block: MR rows x V vectors of columns over K steps; it asks for its rows of A
// `Next` steps further along k (the caller's next k-step), a line a row every 16 steps.
template <int MR, int K, int TransA, int V, int Next>
inline void register_block(const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
    vec acc[MR][V];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) acc[r][v] = load(c + r * ldc + v * lanes);
    for (int k = 0; k < K; ++k) {
        if (TransA) prefetch_l2(a, (long long)(Next + k) * lda);
        else if (k % 16 == 0)
#pragma GCC unroll 16
            for (int r = 0; r < MR; ++r) prefetch_l2(a, (long long)r * lda + Next + k);
        vec bk[V];
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) bk[v] = load(b + k * ldb + v * lanes);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
            vec ar = broadcast(TransA ? a[k * lda + r] : a[r * lda + k]);
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) acc[r][v] = fma(ar, bk[v], acc[r][v]);
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) store(c + r * ldc + v * lanes, acc[r][v]);
}

// Rows [0, rows) of one column panel over KC steps of k (A's lines `Next` steps on asked for),
// MR rows at a time (the accumulators' share of the registers, half of them for one vector) and
// the rest in one smaller block; a partial tile (rows < M) ends in blocks of 3 rows and of 1.
template <int M, int KC, int TransA, int V, int Next>
inline void row_blocks(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int rows) {
    constexpr int MR = accumulators / (V >= 2 ? V : 2);
    const int full = rows / MR * MR;
    auto at = [&](int i) { return TransA ? a + i : a + i * lda; };
    for (int i = 0; i < full; i += MR) register_block<MR, KC, TransA, V, Next>(at(i), lda, b, ldb, c + i * ldc, ldc);
    if (rows == M) {
        if constexpr (M % MR != 0)
            register_block<M % MR, KC, TransA, V, Next>(at(full), lda, b, ldb, c + full * ldc, ldc);
        return;
    }
    int i = full;
    for (; i + 3 <= rows; i += 3) register_block<3, KC, TransA, V, Next>(at(i), lda, b, ldb, c + i * ldc, ldc);
    for (; i < rows; ++i) register_block<1, KC, TransA, V, Next>(at(i), lda, b, ldb, c + i * ldc, ldc);
}

// The k-steps of a panel whose rows of B fill half of a 32 KB L1 data cache (the smallest of the
// x86 CPUs with these instruction sets), so that the panel stays in L1 while every register
// block down the tile reads it: 64 steps for AVX-512's 64-column panels, 256 for AVX2's 16.
template <int V>
constexpr int panel_k_steps = 16 * 1024 / (V * lanes * int(sizeof(float)));

// One column panel of V vectors: K in chunks of panel_k_steps where they divide it (C's
// accumulators are loaded and stored once per chunk), whole otherwise.
template <int M, int K, int TransA, int V>
inline void column_block(const float* a, int lda, const float* b, int ldb, float* c, int ldc, int rows) {
    constexpr int KC = K > panel_k_steps<V> && K % panel_k_steps<V> == 0 ? panel_k_steps<V> : K;
    for (int k0 = 0; k0 < K; k0 += KC)
        row_blocks<M, KC, TransA, V, K>(TransA ? a + k0 * lda : a + k0, lda, b + k0 * ldb, ldb, c, ldc, rows);
}
#endif

// The columns no vector covers (or all of them without vectors): plain loops over a panel of
// `width` columns.
template <int M, int K, int TransA>
inline void columns(const float* a, int lda, const float* b, float* c, int ldc, int width, int rows) {
    for (int i = 0; i < rows; ++i)
        for (int k = 0; k < K; ++k) {
            float ai = TransA ? a[k * lda + i] : a[i * lda + k];
            for (int j = 0; j < width; ++j) c[i * ldc + j] += ai * b[k * width + j];
        }
}

// B is packed in column panels, each [K][width] and contiguous, so that the panel a register
// block reads stays in L1 (the rows of a tile in place are one row stride apart, which maps
// them onto a few cache sets). Panels are four vectors wide where there are registers for it
// (AVX-512: 6 rows x 4 vectors a register block, whose 6 rows of A stay within L1's 8 ways
// when A's row stride is a multiple of 4 KB), then two, then one, then the rest.
inline int panel_width(int first, int n) {
    int rest = n - first;
    if (lanes && max_vectors >= 4 && rest >= 4 * lanes) return 4 * lanes;
    if (lanes && rest >= 2 * lanes) return 2 * lanes;
    if (lanes && rest >= lanes) return lanes;
    return rest;
}

template <int K, int N, int TransB, bool Reuse, typename TB>
inline const float* pack_b(const TB* b, int ldb) {
    float* out;
    if constexpr (Reuse) {
        // The form: B's element type (f32, bf16 and f16 all pack into f32 panels) and TransB.
        constexpr int type = std::is_same_v<TB, float> ? 0 : std::is_same_v<TB, bfloat16> ? 1 : 2;
        ReusedTile<float> tile = reused_tile<float>(b, ldb, K, N, 2 * type + TransB, 0);
        if (tile.packed) return tile.data;
        out = tile.data;
    } else {
        out = scratch<float, 1>(static_cast<size_t>(K) * N);
    }
    for (int j0 = 0; j0 < N; j0 += panel_width(j0, N)) {
        const int width = panel_width(j0, N);
        float* panel = out + j0 * K;
        for (int k = 0; k < K; ++k) {
            prefetch_next_k_step<K, TransB>(b, ldb, k, j0, width);
            for (int j = 0; j < width; ++j)
                panel[k * width + j] = static_cast<float>(TransB ? b[(j0 + j) * ldb + k] : b[k * ldb + j0 + j]);
        }
    }
    return out;
}

#if defined(__AVX512BF16__) || defined(__AVX512VNNI__)
// Dot-product instructions: each adds G products along k into every 32-bit lane, G times the
// work of an FMA. vdpbf16ps: pairs of bf16 into f32 (it flushes subnormal inputs and rounds the
// sum of the two products once; both within the bf16 inputs' own precision). vpdpbusd: quads of
// bytes into i32, unsigned x signed: A is offset by 128 into unsigned bytes and 128 x B's column
// sums are taken off the accumulators first, which keeps the result exact (A is copied once with
// the offset applied). A row's group of G along k is one 32-bit broadcast; B is packed in panels
// of 64, 32 or 16 columns, [K/G][columns][G], so that each vector holds the groups of 16 columns.
inline std::uint32_t load_group(const void* p) {
    std::uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

#if defined(__AVX512BF16__)
struct DotBf16 {
    using In = bfloat16;
    using C = float;
    using Acc = __m512;
    static constexpr int group = 2;
    static Acc start(const float* c, const std::int32_t*) { return _mm512_loadu_ps(c); }
    static void store(float* c, Acc v) { _mm512_storeu_ps(c, v); }
    static constexpr bool offset = false;  // A is read in place (row-major)
    static In a_element(In x) { return x; }
    static Acc dot(Acc acc, __m512i a, __m512i b) { return _mm512_dpbf16_ps(acc, (__m512bh)a, (__m512bh)b); }
};
#endif
#if defined(__AVX512VNNI__)
struct DotI8 {
    using In = std::int8_t;
    using C = std::int32_t;
    using Acc = __m512i;
    static constexpr int group = 4;
    static Acc start(const std::int32_t* c, const std::int32_t* bias) {
        return _mm512_sub_epi32(_mm512_loadu_si512(c), _mm512_loadu_si512(bias));
    }
    static void store(std::int32_t* c, Acc v) { _mm512_storeu_si512(c, v); }
    // A copied once with each byte offset by 128; 128 x B's column sums taken off (`bias`).
    static constexpr bool offset = true;
    static In a_element(In x) { return In(std::uint8_t(x) ^ 0x80u); }
    static Acc dot(Acc acc, __m512i a, __m512i b) {
#if defined(__GNUC__) && !defined(__clang__)
        // g++ 12 copies each accumulator to another register after every _mm512_dpbusd_epi32
        // (a move per instruction, half the kernel's speed); tied in place here.
        __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(a), "v"(b));
        return acc;
#else
        return _mm512_dpbusd_epi32(acc, a, b);
#endif
    }
};
#endif

// One register block: MR rows x V vectors of 16 columns, MR * V accumulators.
template <typename Dot, int MR, int K, int V>
inline void register_block_dot(const typename Dot::In* a, int lda, const typename Dot::In* panel,
                               const std::int32_t* bias, typename Dot::C* c, int ldc) {
    constexpr int G = Dot::group;
    typename Dot::Acc acc[MR][V];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) acc[r][v] = Dot::start(c + r * ldc + v * 16, bias ? bias + v * 16 : nullptr);
    for (int k = 0; k < K; k += G) {
        __m512i bk[V];
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) bk[v] = _mm512_loadu_si512(panel + (k * V + G * v) * 16);
#pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
            __m512i ar = _mm512_set1_epi32(static_cast<int>(load_group(a + r * lda + k)));
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) acc[r][v] = Dot::dot(acc[r][v], ar, bk[v]);
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) Dot::store(c + r * ldc + v * 16, acc[r][v]);
}

// A panel's register blocks down the tile's rows: 24 accumulators each (MR = 24 / V rows, 12
// at most), the last block shorter where MR does not divide M; a partial tile (rows < M) ends
// in blocks of 3 rows and of 1.
template <typename Dot, int M, int K, int V>
inline void panel_blocks_dot(const typename Dot::In* a, int lda, const typename Dot::In* panel,
                             const std::int32_t* bias, typename Dot::C* c, int ldc, int rows) {
    constexpr int MR = V >= 2 ? 24 / V : 12;
    const int full = rows / MR * MR;
    for (int i = 0; i < full; i += MR) register_block_dot<Dot, MR, K, V>(a + i * lda, lda, panel, bias, c + i * ldc, ldc);
    if (rows == M) {
        if constexpr (M % MR != 0)
            register_block_dot<Dot, M % MR, K, V>(a + full * lda, lda, panel, bias, c + full * ldc, ldc);
        return;
    }
    int i = full;
    for (; i + 3 <= rows; i += 3) register_block_dot<Dot, 3, K, V>(a + i * lda, lda, panel, bias, c + i * ldc, ldc);
    for (; i < rows; ++i) register_block_dot<Dot, 1, K, V>(a + i * lda, lda, panel, bias, c + i * ldc, ldc);
}

// A row-major with K a multiple of the group, N a multiple of 16.
template <typename Dot, int M, int N, int K, int TransB, bool Reuse>
inline void gemm_dot(const typename Dot::In* a, int lda, const typename Dot::In* b, int ldb, typename Dot::C* c,
                     int ldc, int rows) {
    using In = typename Dot::In;
    constexpr int G = Dot::group;
    constexpr bool offset = Dot::offset;
    In* packed;
    std::int32_t* bias;
    bool ready = false;  // packed (with its column sums) by an earlier block of this launch
    if constexpr (Reuse) {
        ReusedTile<In> tile = reused_tile<In>(b, ldb, K, N, TransB, offset ? N : 0);
        packed = tile.data, bias = offset ? tile.sums : nullptr, ready = tile.packed;
    } else {
        packed = scratch<In, 1>(static_cast<size_t>(K) * N);
        bias = offset ? scratch<std::int32_t, 2>(static_cast<size_t>(N)) : nullptr;
    }
    for (int j0 = 0; j0 < N;) {
        // 64 columns a panel (6 rows x 4 vectors a register block: fewer broadcasts per
        // dot-product than 12 x 2, and A's 6 rows stay clear of L1's 8 ways when its row stride
        // is a multiple of 4 KB), then 32 and 16 for the rest.
        const int width = N - j0 >= 64 ? 64 : N - j0 >= 32 ? 32 : 16;
        In* panel = packed + j0 * K;
        for (int k = 0; k < K && !ready; ++k)
            prefetch_next_k_step<K, TransB>(b, ldb, k, j0, width);
        bool interleaved = ready;
        if constexpr (std::is_same_v<In, bfloat16>) {
            if (!interleaved && !TransB && width % 32 == 0) {
                interleaved = true;
                // Rows k and k + 1 interleaved by 16-bit lanes, 32 columns at a time: columns
                // 0-15, then 16-31.
                const __m512i low = _mm512_set_epi16(47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10, 41, 9, 40, 8, 39,
                                                     7, 38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
                const __m512i high = _mm512_add_epi16(low, _mm512_set1_epi16(16));
                for (int k = 0; k < K; k += 2)
                    for (int j = 0; j < width; j += 32) {
                        const In* src = b + k * ldb + j0 + j;
                        __m512i r0 = _mm512_loadu_si512(src), r1 = _mm512_loadu_si512(src + ldb);
                        _mm512_storeu_si512(panel + k * width + 2 * j, _mm512_permutex2var_epi16(r0, low, r1));
                        _mm512_storeu_si512(panel + k * width + 2 * j + 32, _mm512_permutex2var_epi16(r0, high, r1));
                    }
            }
        }
#if defined(__AVX512VNNI__)
        if constexpr (std::is_same_v<In, std::int8_t>) {
            if (!interleaved && !TransB) {
                // Rows k .. k + 3 interleaved by bytes, 16 columns at a time: [16 columns][4].
                interleaved = true;
                for (int k = 0; k < K; k += 4)
                    for (int j = 0; j < width; j += 16) {
                        const std::int8_t* src = b + k * ldb + j0 + j;
                        __m128i r0 = _mm_loadu_si128((const __m128i*)src);
                        __m128i r1 = _mm_loadu_si128((const __m128i*)(src + ldb));
                        __m128i r2 = _mm_loadu_si128((const __m128i*)(src + 2 * ldb));
                        __m128i r3 = _mm_loadu_si128((const __m128i*)(src + 3 * ldb));
                        __m128i p01l = _mm_unpacklo_epi8(r0, r1), p01h = _mm_unpackhi_epi8(r0, r1);
                        __m128i p23l = _mm_unpacklo_epi8(r2, r3), p23h = _mm_unpackhi_epi8(r2, r3);
                        __m128i* dst = (__m128i*)(panel + (k / 4 * width + j) * 4);
                        _mm_storeu_si128(dst, _mm_unpacklo_epi16(p01l, p23l));
                        _mm_storeu_si128(dst + 1, _mm_unpackhi_epi16(p01l, p23l));
                        _mm_storeu_si128(dst + 2, _mm_unpacklo_epi16(p01h, p23h));
                        _mm_storeu_si128(dst + 3, _mm_unpackhi_epi16(p01h, p23h));
                    }
            }
        }
#endif
        if (!interleaved)
            for (int k = 0; k < K; ++k)
                for (int j = 0; j < width; ++j)
                    panel[(k / G * width + j) * G + k % G] = TransB ? b[(j0 + j) * ldb + k] : b[k * ldb + j0 + j];
#if defined(__AVX512VNNI__)
        if constexpr (offset) {
            // 128 x each column's sum: vpdpbusd of the packed quads with bytes of one.
            const __m512i ones = _mm512_set1_epi8(1);
            for (int j = 0; j < width && !ready; j += 16) {
                __m512i sum = _mm512_set1_epi32(0);
                for (int k = 0; k < K; k += 4)
                    sum = _mm512_dpbusd_epi32(sum, ones, _mm512_loadu_si512(panel + (k / 4 * width + j) * 4));
                _mm512_storeu_si512(bias + j0 + j, _mm512_mullo_epi32(sum, _mm512_set1_epi32(128)));
            }
        }
#endif
        const std::int32_t* panel_bias = offset ? bias + j0 : nullptr;
        if (width == 64) panel_blocks_dot<Dot, M, K, 4>(a, lda, panel, panel_bias, c + j0, ldc, rows);
        else if (width == 32) panel_blocks_dot<Dot, M, K, 2>(a, lda, panel, panel_bias, c + j0, ldc, rows);
        else panel_blocks_dot<Dot, M, K, 1>(a, lda, panel, panel_bias, c + j0, ldc, rows);
        j0 += width;
    }
}

// op(A) row-major, so that A's groups along k are adjacent; copied when it is not, or when the
// instruction wants its elements changed (vpdpbusd: once here, not at every broadcast).
template <typename Dot, int M, int N, int K, int TransA, int TransB, bool Reuse>
inline void gemm_dot_any_a(const typename Dot::In* a, int lda, const typename Dot::In* b, int ldb,
                           typename Dot::C* c, int ldc, int rows) {
    if constexpr (TransA || Dot::offset) {
        typename Dot::In* copy = scratch<typename Dot::In, 0>(static_cast<size_t>(M) * K);
        for (int i = 0; i < rows; ++i) {
            if (!TransA) prefetch_next_k_step_row(a, lda, i, K);
            for (int k = 0; k < K; ++k) copy[i * K + k] = Dot::a_element(TransA ? a[k * lda + i] : a[i * lda + k]);
        }
        gemm_dot<Dot, M, N, K, TransB, Reuse>(copy, K, b, ldb, c, ldc, rows);
    } else {
        gemm_dot<Dot, M, N, K, TransB, Reuse>(a, lda, b, ldb, c, ldc, rows);
    }
}
#endif

// AMX (Intel's tile registers: Sapphire Rapids and later). Eight tiles of up to 16 rows x 64
// bytes; tdpbf16ps adds a 16 x 32 bf16 tile of A times a 16 (k-pairs) x 16 x 2 tile of B (B's
// pairs of rows interleaved, the layout the vdpbf16ps panels already have) into a 16 x 16 f32
// tile of C. A register block here is 32 x 32 of C (tiles 0-3), two tiles of A (4, 5) and two
// of B (6, 7) per 32 of K; A and C are read and written in place with their row strides. The
// instructions come from `Tiles` (AmxTiles below; the tests' emulation otherwise), so that the
// form is tested on CPUs without AMX. Tiles whose shape does not fit (M not a multiple of 16,
// N of 32, K of 32, or TransA) take the vdpbf16ps form.
struct TileConfig {  // the 64-byte operand of ldtilecfg (palette 1)
    std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
    std::uint16_t colsb[16] = {};
    std::uint8_t rows[16] = {};
};

template <int M, int N, int K, int TransB>
constexpr bool amx_fits = M % 16 == 0 && N % 32 == 0 && K % 32 == 0;

template <typename Tiles, int M, int N, int K, int TransB>
inline void gemm_amx(const bfloat16* a, int lda, const bfloat16* b, int ldb, float* c, int ldc) {
    static_assert(amx_fits<M, N, K, TransB>, "gemm_amx: M % 16, N % 32, K % 32");
    TileConfig config;
    for (int t = 0; t < 8; ++t) config.rows[t] = 16, config.colsb[t] = 64;
    Tiles::configure(config);
    bfloat16* panel = scratch<bfloat16, 1>(static_cast<size_t>(K) * 32);
    const long sa = long(lda) * 2, sc = long(ldc) * 4, sb = 128;  // row strides in bytes
    for (int j0 = 0; j0 < N; j0 += 32) {
        for (int k = 0; k < K; ++k) prefetch_next_k_step<K, TransB>(b, ldb, k, j0, 32);
        // B's 32 columns as k-pairs: panel[(k / 2) * 64 + j * 2 + k % 2].
        for (int k = 0; k < K; ++k)
            for (int j = 0; j < 32; ++j)
                panel[(k / 2) * 64 + j * 2 + k % 2] = TransB ? b[(j0 + j) * ldb + k] : b[k * ldb + j0 + j];
        for (int i0 = 0; i0 < M; i0 += 32) {
            const bool two = i0 + 16 < M;  // a second row tile (M is a multiple of 16)
            float* c0 = c + i0 * ldc + j0;
            Tiles::template load<0>(c0, sc);
            Tiles::template load<1>(c0 + 16, sc);
            if (two) {
                Tiles::template load<2>(c0 + 16 * ldc, sc);
                Tiles::template load<3>(c0 + 16 * ldc + 16, sc);
            }
            for (int k0 = 0; k0 < K; k0 += 32) {
                Tiles::template load<6>(panel + (k0 / 2) * 64, sb);
                Tiles::template load<7>(panel + (k0 / 2) * 64 + 32, sb);
                Tiles::template load<4>(a + i0 * lda + k0, sa);
                Tiles::template dot_bf16<0, 4, 6>();
                Tiles::template dot_bf16<1, 4, 7>();
                if (two) {
                    Tiles::template load<5>(a + (i0 + 16) * lda + k0, sa);
                    Tiles::template dot_bf16<2, 5, 6>();
                    Tiles::template dot_bf16<3, 5, 7>();
                }
            }
            Tiles::template store<0>(c0, sc);
            Tiles::template store<1>(c0 + 16, sc);
            if (two) {
                Tiles::template store<2>(c0 + 16 * ldc, sc);
                Tiles::template store<3>(c0 + 16 * ldc + 16, sc);
            }
        }
    }
    Tiles::release();
}

#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
// GCC's tile intrinsics paste their tile numbers into the assembly text: one specialisation
// per tile, each naming its number.
struct AmxTiles {
    static void configure(const TileConfig& config) { _tile_loadconfig(&config); }
    template <int T>
    static void load(const void* p, long stride);
    template <int T>
    static void store(void* p, long stride);
    template <int C, int A, int B>
    static void dot_bf16();
    static void release() { _tile_release(); }
};
#define TLC_AMX_TILE(T)                                                                                     \
    template <> inline void AmxTiles::load<T>(const void* p, long stride) { _tile_loadd(T, p, stride); }   \
    template <> inline void AmxTiles::store<T>(void* p, long stride) { _tile_stored(T, p, stride); }
TLC_AMX_TILE(0)
TLC_AMX_TILE(1)
TLC_AMX_TILE(2)
TLC_AMX_TILE(3)
TLC_AMX_TILE(4)
TLC_AMX_TILE(5)
TLC_AMX_TILE(6)
TLC_AMX_TILE(7)
#undef TLC_AMX_TILE
#define TLC_AMX_DOT(C, A, B) \
    template <> inline void AmxTiles::dot_bf16<C, A, B>() { _tile_dpbf16ps(C, A, B); }
TLC_AMX_DOT(0, 4, 6)
TLC_AMX_DOT(1, 4, 7)
TLC_AMX_DOT(2, 5, 6)
TLC_AMX_DOT(3, 5, 7)
#undef TLC_AMX_DOT
#endif

// One tile: the forms above as the compiler's flags and the tile allow. Reuse: B's packed
// tile is kept for the launch's other blocks (reused_tile). Only C's first `rows` rows are
// computed and A's first `rows` rows (columns, TransA) read: a tile at the tensor's edge whose
// other rows are zeros in A and dropped from C (the lowering passes rows only then).
template <int M, int N, int K, int TransA, int TransB, bool Reuse, typename TA, typename TB>
inline void tile(const TA* a, int lda, const TB* b, int ldb, float* c, int ldc, int rows) {
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
    if constexpr (std::is_same_v<TA, bfloat16> && std::is_same_v<TB, bfloat16> && !TransA &&
                  amx_fits<M, N, K, TransB>) {
        if (rows == M) {  // whole tiles of 16 rows (a partial tile takes vdpbf16ps)
            gemm_amx<AmxTiles, M, N, K, TransB>(a, lda, b, ldb, c, ldc);
            return;
        }
    }
#endif
#if defined(__AVX512BF16__)
    if constexpr (std::is_same_v<TA, bfloat16> && std::is_same_v<TB, bfloat16> && K % 2 == 0 && N % 16 == 0) {
        gemm_dot_any_a<DotBf16, M, N, K, TransA, TransB, Reuse>(a, lda, b, ldb, c, ldc, rows);
        return;
    }
#endif
    if constexpr (!std::is_same_v<TA, float>) {
        const float* af = as_f32(a, lda, rows, K, TransA != 0);  // row-major [rows][K]
        tile<M, N, K, 0, TransB, Reuse>(af, K, b, ldb, c, ldc, rows);
    } else {
        const float* panels = pack_b<K, N, TransB, Reuse>(b, ldb);
        for (int j = 0; j < N;) {
            const int width = panel_width(j, N);
            const float* panel = panels + j * K;
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
            if (width == 4 * lanes) column_block<M, K, TransA, max_vectors>(a, lda, panel, width, c + j, ldc, rows);
            else if (width == 2 * lanes) column_block<M, K, TransA, 2>(a, lda, panel, width, c + j, ldc, rows);
            else if (width == lanes) column_block<M, K, TransA, 1>(a, lda, panel, width, c + j, ldc, rows);
            else columns<M, K, TransA>(a, lda, panel, c + j, ldc, width, rows);
#else
            columns<M, K, TransA>(a, lda, panel, c + j, ldc, width, rows);
#endif
            j += width;
        }
    }
}

// i8 x i8 -> i32 (exact): vpdpbusd where the compiler targets AVX512_VNNI and the tile suits it
// (K a multiple of 4, N of 16), plain loops otherwise.
template <int M, int N, int K, int TransA, int TransB, bool Reuse>
inline void tile(const std::int8_t* a, int lda, const std::int8_t* b, int ldb, std::int32_t* c, int ldc, int rows) {
#if defined(__AVX512VNNI__)
    if constexpr (K % 4 == 0 && N % 16 == 0) {
        gemm_dot_any_a<DotI8, M, N, K, TransA, TransB, Reuse>(a, lda, b, ldb, c, ldc, rows);
        return;
    }
#endif
    for (int i = 0; i < rows; ++i)
        for (int k = 0; k < K; ++k) {
            const std::int32_t ai = TransA ? a[k * lda + i] : a[i * lda + k];
            for (int j = 0; j < N; ++j) c[i * ldc + j] += ai * std::int32_t(TransB ? b[j * ldb + k] : b[k * ldb + j]);
        }
}
} // namespace cpu_gemm

// C[M][N] += op(A) op(B) on tiles (section comment above). `rows` < M: a tile at the tensor's
// edge, whose C rows from `rows` on are left as they are and A's rows there not read.
template <int M, int N, int K, int TransA, int TransB, typename TA, typename TB, typename TC>
inline void gemm_tile(const TA* a, int lda, const TB* b, int ldb, TC* c, int ldc, int rows = M) {
    rows = rows < 0 ? 0 : rows > M ? M : rows;
    cpu_gemm::tile<M, N, K, TransA, TransB, false>(a, lda, b, ldb, c, ldc, rows);
}

// The same, with B's packed tile kept for the blocks of this launch that read the same tile
// (B a tensor the kernel does not write; the launcher called cpu_gemm::new_launch()).
template <int M, int N, int K, int TransA, int TransB, typename TA, typename TB, typename TC>
inline void gemm_tile_reused_b(const TA* a, int lda, const TB* b, int ldb, TC* c, int ldc, int rows = M) {
    rows = rows < 0 ? 0 : rows > M ? M : rows;
    cpu_gemm::tile<M, N, K, TransA, TransB, true>(a, lda, b, ldb, c, ldc, rows);
}
} // namespace tl
// tlc:end

// tlc:section debug
#include <cstdio>
#include <cstdlib>
namespace tl {
// Reports a failed assert(...) of the .tl source and stops the program (debug builds only).
inline void assert_fail(const char* where, const char* condition) {
    std::fprintf(stderr, "%s: assertion failed: %s\n", where, condition);
    std::abort();
}
} // namespace tl
// tlc:end

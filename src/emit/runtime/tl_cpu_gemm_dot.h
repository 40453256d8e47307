// tl_cpu_gemm_dot.h -- the CPU gemm's dot-product forms: bf16 pairs into f32 (AVX512_BF16,
// vdpbf16ps) and i8 quads into i32 (AVX512_VNNI, vpdpbusd). Sections: see tl_common.h.
#pragma once

#include "tl_cpu_gemm_common.h"
#include "tl_types.h"

// tlc:section gemm_dot needs=tl_types.h:bfloat16,tl_cpu_gemm_common.h:gemm_common
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>  // x86 only: the portable form must build on any CPU
#endif
#include <cstdint>
#include <cstring>
#include <type_traits>
namespace tl {
namespace cpu_gemm {
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
} // namespace cpu_gemm
} // namespace tl
// tlc:end

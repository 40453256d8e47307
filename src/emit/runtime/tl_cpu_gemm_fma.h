// tl_cpu_gemm_fma.h -- the CPU gemm's FMA form (AVX-512, AVX2 + FMA, or plain loops without
// either): register blocks of f32 accumulators over B packed into f32 column panels.
// Sections: see tl_common.h.
#pragma once

#include "tl_cpu_gemm_common.h"
#include "tl_types.h"

// tlc:section gemm_fma needs=tl_types.h:bfloat16,tl_cpu_gemm_common.h:gemm_common
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>  // x86 only: the portable form must build on any CPU
#endif
#include <type_traits>
namespace tl {
namespace cpu_gemm {
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
} // namespace cpu_gemm
} // namespace tl
// tlc:end

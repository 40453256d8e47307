// tl_cpu_gemm.h -- gemm on the tiles a CPU block holds (tl::gemm_tile, tl::gemm_tile_reused_b):
// the form the compiler's flags and the tile's shape allow, of tl_cpu_gemm_amx.h (AMX),
// tl_cpu_gemm_dot.h (vdpbf16ps, vpdpbusd) and tl_cpu_gemm_fma.h (FMA, plain loops).
// Sections: see tl_common.h.
#pragma once

#include "tl_cpu_gemm_amx.h"
#include "tl_cpu_gemm_dot.h"
#include "tl_cpu_gemm_fma.h"
#include "tl_types.h"

// tlc:section gemm needs=tl_types.h:bfloat16,tl_cpu_gemm_fma.h:gemm_fma,tl_cpu_gemm_dot.h:gemm_dot,tl_cpu_gemm_amx.h:gemm_amx
#include <cstdint>
#include <type_traits>
namespace tl {
namespace cpu_gemm {
// One tile: the forms above as the compiler's flags and the tile allow. Reuse: B's packed
// tile is kept for the launch's other blocks (reused_tile). Only C's first `rows` rows are
// computed and A's first `rows` rows (columns, TransA) read: a tile at the tensor's edge whose
// other rows are zeros in A and dropped from C (the lowering passes rows only then).
template <int M, int N, int K, int TransA, int TransB, bool Reuse, typename TA, typename TB>
inline void tile(const TA* a, int lda, const TB* b, int ldb, float* c, int ldc, int rows) {
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
    if constexpr (std::is_same_v<TA, bfloat16> && std::is_same_v<TB, bfloat16> && !TransA &&
                  amx_fits<M, N, K, TransB>) {
        // Whole tiles of 16 rows (a partial tile takes vdpbf16ps), once the OS granted the
        // tile state (asked once; without it the first tile instruction is SIGILL).
        if (rows == M && request_xtiledata()) {
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

// tl_cpu_gemm_amx.h -- the CPU gemm's AMX form (bf16 tiles through tdpbf16ps: Sapphire Rapids
// and later). Linux hands out the tile state only on request (tl_cpu.h, xtiledata): the cpu-amx
// target's launcher asks before any kernel code runs; where another cpu target's compiler flags
// enable AMX (-march=native on such a CPU), tl_cpu_gemm.h asks before the first tile.
// Sections: see tl_common.h.
#pragma once

#include "tl_cpu.h"
#include "tl_cpu_gemm_common.h"
#include "tl_types.h"

// tlc:section gemm_amx needs=tl_types.h:bfloat16,tl_cpu_gemm_common.h:gemm_common,tl_cpu.h:xtiledata
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>  // x86 only: the portable form must build on any CPU
#endif
#include <cstdint>
namespace tl {
namespace cpu_gemm {
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
} // namespace cpu_gemm
} // namespace tl
// tlc:end

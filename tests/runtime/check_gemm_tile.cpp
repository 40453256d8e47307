// tl::gemm_tile (tl_cpu_gemm.h, section gemm) against a double-precision reference on random
// inputs: every transpose form, f32/bf16/f16 inputs (and i8 -> i32, exactly), tile shapes that do and do not divide the
// register blocks (rows 12/6, columns 32/16 on AVX-512/AVX2), row strides wider than the tile,
// and accumulation into a C that is not zero; partial tiles (`rows`: C's rows past it untouched). Built four times (tests/CMakeLists.txt): plain
// (the portable loops), -march=x86-64-v3 (AVX2), -march=x86-64-v4 (AVX-512) and with
// -mavx512bf16 (bf16 through vdpbf16ps) and -mavx512vnni (i8 through vpdpbusd), and for AMX
// (bf16 through tdpbf16ps): -march=sapphirerapids, and over emulated tiles (TLC_AMX_EMULATE) on
// any AVX-512 CPU; a build whose instructions the machine lacks exits 77, which CTest reports as
// skipped.
#include "tl_cpu.h"  // request_xtiledata
#include "tl_cpu_gemm.h"

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

namespace {

int failures = 0;

template <typename T>
T convert(float x) {
    if constexpr (std::is_same_v<T, std::int8_t>) return T(std::lround(x * 127.5f - 0.5f));  // -128 .. 127
    else return T(x);
}

// The accumulator: exact i32 for i8 inputs, f32 otherwise.
template <typename T>
using Acc = std::conditional_t<std::is_same_v<T, std::int8_t>, std::int32_t, float>;

// How a check calls the kernel: tl::gemm_tile (whatever form the flags give it), or the AMX form
// over the emulated tiles below.
struct ViaGemmTile {
    template <int M, int N, int K, int TA, int TB, typename T, typename C>
    static void run(const T* a, int lda, const T* b, int ldb, C* c, int ldc) {
        tl::gemm_tile<M, N, K, TA, TB>(a, lda, b, ldb, c, ldc);
    }
};

#if defined(TLC_AMX_EMULATE)
// AMX's tile instructions as the ISA reference describes them (ldtilecfg, tileloadd,
// tilestored, tdpbf16ps: each pair's products added in f32 one after the other, bf16 inputs
// that are subnormal read as zero), so that tl_cpu_gemm_amx.h's AMX form (cpu_gemm::gemm_amx) runs on
// CPUs without AMX. What this cannot check is the hardware itself: the cpu-amx form of this test
// (-march=sapphirerapids) does, where such a CPU runs it.
struct EmulatedTiles {
    static inline tl::cpu_gemm::TileConfig config;
    static inline unsigned char tiles[8][16 * 64];
    static int rows(int t) { return config.rows[t]; }
    static int colsb(int t) { return config.colsb[t]; }
    static void configure(const tl::cpu_gemm::TileConfig& c) { config = c; }
    template <int T>
    static void load(const void* p, long stride) {
        for (int r = 0; r < rows(T); ++r) std::memcpy(tiles[T] + r * 64, static_cast<const char*>(p) + r * stride, colsb(T));
    }
    template <int T>
    static void store(void* p, long stride) {
        for (int r = 0; r < rows(T); ++r) std::memcpy(static_cast<char*>(p) + r * stride, tiles[T] + r * 64, colsb(T));
    }
    static float bf16At(int t, int row, int i) {
        std::uint16_t bits;
        std::memcpy(&bits, tiles[t] + row * 64 + i * 2, 2);
        if ((bits & 0x7f80u) == 0) bits &= 0x8000u;  // DAZ
        std::uint32_t f = std::uint32_t(bits) << 16;
        float v;
        std::memcpy(&v, &f, 4);
        return v;
    }
    template <int C, int A, int B>
    static void dot_bf16() {
        for (int m = 0; m < rows(C); ++m)
            for (int n = 0; n < colsb(C) / 4; ++n) {
                float acc;
                std::memcpy(&acc, tiles[C] + m * 64 + n * 4, 4);
                for (int k = 0; k < colsb(A) / 4; ++k) {
                    acc += bf16At(A, m, 2 * k) * bf16At(B, k, 2 * n);
                    acc += bf16At(A, m, 2 * k + 1) * bf16At(B, k, 2 * n + 1);
                }
                std::memcpy(tiles[C] + m * 64 + n * 4, &acc, 4);
            }
    }
    static void release() { config = {}; }
};

struct ViaEmulatedAmx {
    template <int M, int N, int K, int TA, int TB, typename T, typename C>
    static void run(const T* a, int lda, const T* b, int ldb, C* c, int ldc) {
        static_assert(TA == 0 && std::is_same_v<T, tl::bfloat16>);
        tl::cpu_gemm::gemm_amx<EmulatedTiles, M, N, K, TB>(a, lda, b, ldb, c, ldc);
    }
};
#endif

// C[M][N] (row stride ldc) += op(A) op(B); inputs stored with row strides lda, ldb.
template <int M, int N, int K, int TA, int TB, typename T, typename Via = ViaGemmTile>
void check(const char* type, std::mt19937& gen) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    const int lda = (TA ? M : K) + 3, ldb = (TB ? K : N) + 5, ldc = N + 7;
    const int aRows = TA ? K : M, bRows = TB ? N : K;
    std::vector<T> a(size_t(aRows) * lda), b(size_t(bRows) * ldb);
    for (auto& x : a) x = convert<T>(dist(gen));
    for (auto& x : b) x = convert<T>(dist(gen));
    std::vector<Acc<T>> c(static_cast<size_t>(M) * ldc);
    for (auto& x : c) x = Acc<T>(std::is_same_v<T, std::int8_t> ? dist(gen) * 1e6f : dist(gen));
    std::vector<double> want(c.begin(), c.end());
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double sum = want[size_t(i) * ldc + j];
            for (int k = 0; k < K; ++k) {
                double av = double(float(TA ? a[size_t(k) * lda + i] : a[size_t(i) * lda + k]));
                double bv = double(float(TB ? b[size_t(j) * ldb + k] : b[size_t(k) * ldb + j]));
                sum += av * bv;
            }
            want[size_t(i) * ldc + j] = sum;
        }
    Via::template run<M, N, K, TA, TB>(a.data(), lda, b.data(), ldb, c.data(), ldc);
    double worst = 0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double err = std::fabs(c[size_t(i) * ldc + j] - want[size_t(i) * ldc + j]);
            worst = std::max(worst, err);
        }
    // f32 products and sums of K terms of magnitude <= 1: a few ulps of K; i8 sums are exact.
    const double tolerance = std::is_same_v<T, std::int8_t> ? 0.0 : 4e-7 * (K + 1);
    if (!(worst <= tolerance)) {
        std::printf("FAIL gemm_tile<%d, %d, %d, %d, %d> %s: max error %.3g > %.3g\n", M, N, K, TA, TB, type, worst,
                    tolerance);
        ++failures;
    }
}

// gemm_tile_reused_b: B's packed tile is kept for the rest of the launch. Two tiles of A against
// one B (the second call finds B packed), then B changed: after new_launch() the next call
// packs it again. `packs`: the form packs B (the same call without new_launch() must then give
// the stale product, which shows that the tile really was kept).
template <int M, int N, int K, int TA, int TB, typename T>
void checkReuse(const char* type, std::mt19937& gen, bool packs) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    const int lda = TA ? M : K, ldb = (TB ? K : N) + 1, ldc = N;
    std::vector<T> a1(size_t(TA ? K : M) * lda), a2(a1.size()), b(size_t(TB ? N : K) * ldb);
    auto fill = [&](std::vector<T>& v) { for (auto& x : v) x = convert<T>(dist(gen)); };
    fill(a1), fill(a2), fill(b);
    auto product = [&](const std::vector<T>& a) {  // op(A) op(B) in double
        std::vector<double> out(static_cast<size_t>(M) * N);
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j)
                for (int k = 0; k < K; ++k)
                    out[size_t(i) * N + j] += double(float(TA ? a[size_t(k) * lda + i] : a[size_t(i) * lda + k])) *
                                              double(float(TB ? b[size_t(j) * ldb + k] : b[size_t(k) * ldb + j]));
        return out;
    };
    auto run = [&](const std::vector<T>& a) {
        std::vector<Acc<T>> c(static_cast<size_t>(M) * N);
        tl::gemm_tile_reused_b<M, N, K, TA, TB>(a.data(), lda, b.data(), ldb, c.data(), ldc);
        return c;
    };
    const double tolerance = std::is_same_v<T, std::int8_t> ? 0.0 : 4e-7 * (K + 1);
    auto matches = [&](const std::vector<Acc<T>>& got, const std::vector<double>& want) {
        for (size_t i = 0; i < got.size(); ++i)
            if (!(std::fabs(got[i] - want[i]) <= tolerance)) return false;
        return true;
    };
    auto fail = [&](const char* what) {
        std::printf("FAIL gemm_tile_reused_b<%d, %d, %d, %d, %d> %s: %s\n", M, N, K, TA, TB, type, what);
        ++failures;
    };
    tl::cpu_gemm::new_launch();
    if (!matches(run(a1), product(a1))) fail("first call");
    if (!matches(run(a2), product(a2))) fail("second call, B packed by the first");
    fill(b);  // what a later launch may find at the same address
    if (packs && matches(run(a1), product(a1))) fail("B changed within the launch, but not kept");
    tl::cpu_gemm::new_launch();
    if (!matches(run(a1), product(a1))) fail("B changed before a new launch");
}

// A tile at a tensor's edge: gemm_tile(.., rows) computes C's first `rows` rows, reads A only
// there (A holds just those rows, so that a read past them is one past the vector: ASan builds
// catch it) and leaves C's other rows as they were.
template <int M, int N, int K, int TA, int TB, typename T>
void checkPartial(const char* type, std::mt19937& gen, int rows) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    const int lda = TA ? M + 3 : K + 1, ldb = (TB ? K : N) + 5, ldc = N + 2;
    // TransA: A is [K][lda] and its first `rows` columns are read; otherwise A has `rows` rows.
    std::vector<T> a(TA ? size_t(K) * lda : size_t(rows) * lda), b(size_t(TB ? N : K) * ldb);
    for (auto& x : a) x = convert<T>(dist(gen));
    for (auto& x : b) x = convert<T>(dist(gen));
    std::vector<Acc<T>> c(static_cast<size_t>(M) * ldc);
    for (auto& x : c) x = Acc<T>(std::is_same_v<T, std::int8_t> ? dist(gen) * 1e6f : dist(gen));
    const std::vector<Acc<T>> before = c;
    tl::gemm_tile<M, N, K, TA, TB>(a.data(), lda, b.data(), ldb, c.data(), ldc, rows);
    const double tolerance = std::is_same_v<T, std::int8_t> ? 0.0 : 4e-7 * (K + 1);
    int wrong = 0, touched = 0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            const size_t at = size_t(i) * ldc + j;
            if (i >= rows) {
                touched += c[at] != before[at];
                continue;
            }
            double sum = before[at];
            for (int k = 0; k < K; ++k)
                sum += double(float(TA ? a[size_t(k) * lda + i] : a[size_t(i) * lda + k])) *
                       double(float(TB ? b[size_t(j) * ldb + k] : b[size_t(k) * ldb + j]));
            wrong += !(std::fabs(c[at] - sum) <= tolerance);
        }
    if (wrong || touched) {
        std::printf("FAIL gemm_tile<%d, %d, %d, %d, %d> %s, rows = %d: %d wrong, %d rows past `rows` changed\n", M, N,
                    K, TA, TB, type, rows, wrong, touched);
        ++failures;
    }
}

template <typename T>
void partialTiles(const char* type, std::mt19937& gen) {
    // Whole blocks and then blocks of 3 and of 1 (6-row blocks of 4 vectors: 64 = 10 x 6 + 4);
    // fewer rows than one block; none.
    for (int rows : {64, 61, 4, 1, 0}) checkPartial<64, 64, 32, 0, 0, T>(type, gen, rows);
    checkPartial<64, 64, 32, 1, 0, T>(type, gen, 37);
    checkPartial<64, 64, 32, 0, 1, T>(type, gen, 37);
    checkPartial<27, 112, 32, 0, 0, T>(type, gen, 20);  // panels of 64, 32 and 16 columns
    checkPartial<13, 21, 7, 1, 1, T>(type, gen, 8);     // plain columns, odd K
    checkPartial<64, 112, 512, 0, 0, T>(type, gen, 37);  // K in chunks (below)
    checkPartial<64, 112, 512, 1, 1, T>(type, gen, 37);
}

template <int M, int N, int K, typename T>
void allForms(const char* type, std::mt19937& gen) {
    check<M, N, K, 0, 0, T>(type, gen);
    check<M, N, K, 1, 0, T>(type, gen);
    check<M, N, K, 0, 1, T>(type, gen);
    check<M, N, K, 1, 1, T>(type, gen);
}

template <typename T>
void shapes(const char* type, std::mt19937& gen) {
    allForms<96, 128, 64, T>(type, gen);  // whole register blocks
    allForms<64, 64, 32, T>(type, gen);   // a 64-column panel: 10 blocks of 6 and one of 4
    allForms<27, 112, 32, T>(type, gen);  // panels of 64, 32 and 16 columns; 27 rows: 4 x 6 + 3, 2 x 12 + 3
    allForms<13, 48, 7, T>(type, gen);    // a 32-column block, a 16-column one, odd K
    allForms<5, 21, 16, T>(type, gen);    // fewer rows than a block; 16 vector columns + 5 plain
    allForms<1, 8, 3, T>(type, gen);      // narrower than any vector
    // K in chunks whose B panel rows take 16 KB: 64, 128 and 256 steps for AVX-512's panels of
    // 64, 32 and 16 columns, 256 and none for AVX2's of 16 and 8.
    allForms<30, 112, 512, T>(type, gen);
}

} // namespace

int main() {
#if defined(TLC_AMX_EMULATE)
    // Built for x86-64-v4 (without -mavx512bf16, which lets g++ convert to bf16 with
    // vcvtneps2bf16: the emulation needs no bf16 instruction).
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("avx512dq")) {
        std::printf("skipped: this CPU has no AVX-512 F/BW/DQ/VL\n");
        return 77;
    }
    const char* form = "AMX over emulated tiles";
    {
        std::mt19937 gen(99);
        // Two row tiles a block; one (48 = 32 + 16); the least shape; B transposed or not.
        check<64, 64, 64, 0, 0, tl::bfloat16, ViaEmulatedAmx>("bf16 (AMX)", gen);
        check<64, 64, 64, 0, 1, tl::bfloat16, ViaEmulatedAmx>("bf16 (AMX)", gen);
        check<48, 96, 128, 0, 0, tl::bfloat16, ViaEmulatedAmx>("bf16 (AMX)", gen);
        check<48, 96, 128, 0, 1, tl::bfloat16, ViaEmulatedAmx>("bf16 (AMX)", gen);
        check<16, 32, 32, 0, 0, tl::bfloat16, ViaEmulatedAmx>("bf16 (AMX)", gen);
    }
#elif defined(__AMX_TILE__) && defined(__AMX_BF16__)
    if (!__builtin_cpu_supports("amx-tile") || !__builtin_cpu_supports("amx-bf16") ||
        !__builtin_cpu_supports("avx512bf16") || !tl::request_xtiledata()) {
        std::printf("skipped: this CPU (or its OS) gives no AMX with BF16\n");
        return 77;
    }
    const char* form = "AMX";
#elif defined(__AVX512VNNI__)
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("avx512dq") ||
        !__builtin_cpu_supports("avx512vnni")) {
        std::printf("skipped: this CPU has no AVX-512 F/BW/DQ/VL with VNNI\n");
        return 77;
    }
    const char* form = "AVX-512 with vpdpbusd";
#elif defined(__AVX512BF16__)
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("avx512dq") ||
        !__builtin_cpu_supports("avx512bf16")) {
        std::printf("skipped: this CPU has no AVX-512 F/BW/DQ/VL with BF16\n");
        return 77;
    }
    const char* form = "AVX-512 with vdpbf16ps";
#elif defined(__AVX512F__)
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
        !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("avx512dq")) {
        std::printf("skipped: this CPU has no AVX-512 F/BW/DQ/VL\n");
        return 77;
    }
    const char* form = "AVX-512";
#elif defined(__AVX2__)
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
        std::printf("skipped: this CPU has no AVX2/FMA\n");
        return 77;
    }
    const char* form = "AVX2";
#else
    const char* form = "portable";
#endif
    std::mt19937 gen(1234);
    shapes<float>("f32", gen);
    shapes<tl::bfloat16>("bf16", gen);
    shapes<tl::half>("f16", gen);
    shapes<std::int8_t>("i8", gen);
#if !defined(TLC_AMX_EMULATE)
    partialTiles<float>("f32", gen);
    partialTiles<tl::bfloat16>("bf16", gen);
    partialTiles<tl::half>("f16", gen);
    partialTiles<std::int8_t>("i8", gen);
    // Reused B tiles. Every form packs B (f32 panels, or bf16 pairs and i8 quads for the dot
    // products) but the AMX form, where the tile fits it, and i8 without VNNI (plain loops).
#if defined(__AMX_TILE__) && defined(__AMX_BF16__)
    const bool amx = true;
#else
    const bool amx = false;
#endif
#if defined(__AVX512VNNI__)
    const bool i8Packs = true;
#else
    const bool i8Packs = false;
#endif
    checkReuse<30, 80, 24, 0, 0, float>("f32", gen, true);
    checkReuse<30, 80, 24, 1, 1, float>("f32", gen, true);
    checkReuse<30, 80, 24, 0, 1, tl::bfloat16>("bf16", gen, true);
    checkReuse<30, 80, 24, 1, 0, tl::bfloat16>("bf16", gen, true);
    checkReuse<32, 64, 32, 0, 0, tl::bfloat16>("bf16", gen, !amx);
    checkReuse<30, 80, 24, 0, 0, tl::half>("f16", gen, true);
    checkReuse<30, 80, 24, 0, 0, std::int8_t>("i8", gen, i8Packs);
    checkReuse<30, 80, 24, 1, 1, std::int8_t>("i8", gen, i8Packs);
#endif
    std::printf("gemm_tile (%s): %s\n", form, failures ? "FAILED" : "all forms match the reference");
    return failures ? 1 : 0;
}

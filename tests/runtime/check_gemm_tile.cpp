// tl::gemm_tile (tl_cpu.h, section gemm) against a double-precision reference on random
// inputs: every transpose form, f32/bf16/f16 inputs (and i8 -> i32, exactly), tile shapes that do and do not divide the
// register blocks (rows 12/6, columns 32/16 on AVX-512/AVX2), row strides wider than the tile,
// and accumulation into a C that is not zero. Built four times (tests/CMakeLists.txt): plain
// (the portable loops), -march=x86-64-v3 (AVX2), -march=x86-64-v4 (AVX-512) and with
// -mavx512bf16 (bf16 through vdpbf16ps) and -mavx512vnni (i8 through vpdpbusd); a build whose instructions the machine lacks exits 77,
// which CTest reports as skipped.
#include "tl_cpu.h"

#include <cmath>
#include <cstdio>
#include <cstdint>
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

// C[M][N] (row stride ldc) += op(A) op(B); inputs stored with row strides lda, ldb.
template <int M, int N, int K, int TA, int TB, typename T>
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
    tl::gemm_tile<M, N, K, TA, TB>(a.data(), lda, b.data(), ldb, c.data(), ldc);
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
    allForms<64, 64, 32, T>(type, gen);   // 64 rows: 5 blocks of 12 and one of 4
    allForms<13, 48, 7, T>(type, gen);    // a 32-column block, a 16-column one, odd K
    allForms<5, 21, 16, T>(type, gen);    // fewer rows than a block; 16 vector columns + 5 plain
    allForms<1, 8, 3, T>(type, gen);      // narrower than any vector
}

} // namespace

int main() {
#if defined(__AVX512VNNI__)
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
    std::printf("gemm_tile (%s): %s\n", form, failures ? "FAILED" : "all forms match the reference");
    return failures ? 1 : 0;
}

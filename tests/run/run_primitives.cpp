// Run layer: every tile primitive on the cpu target against double-precision references.
#include "harness.h"

#include "copy_cast.h"
#include "cumsum.h"
#include "gemm_fp8_mixed.h"
#include "gemm_pipeline.h"
#include "gemm_variants.h"
#include "reductions.h"
#include "split_k.h"

#include <algorithm>
#include <cmath>
#include <functional>

using namespace harness;

namespace {

std::string dims(std::initializer_list<int> d) {
    std::string s;
    for (int v : d) s += (s.empty() ? "" : "x") + std::to_string(v);
    return s;
}

void copyCast(int M, int N) {
    auto X = random<float>(size_t(M) * N, 21, -8.0, 8.0);
    std::vector<tl::bfloat16> Y(size_t(M) * N, tl::bfloat16(-7.0f));
    std::vector<tl::half> Z(size_t(M) * N, tl::half(-7.0f));
    std::vector<float> W(size_t(M) * N, -7.0f);
    std::vector<double> viaHalf(X.size()), viaBf16(X.size()), affine(X.size());
    for (size_t i = 0; i < X.size(); ++i) {
        viaHalf[i] = toDouble(tl::half(X[i]));
        viaBf16[i] = toDouble(tl::bfloat16(float(viaHalf[i])));
        affine[i] = double(X[i]) * 2.0 + 1.0;
    }
    std::string at = " " + dims({M, N});
    // f16 rows move in 8-element vectors on GPUs.
    if (!launched("copy_cast" + at, tl_kernels::copy_cast(X.data(), Y.data(), Z.data(), W.data(), M, N),
                  !kGpu || N % 8 == 0, W, -7.0))
        return;
    check("copy global f32 -> shared f16 -> global" + at, Z, viaHalf, 0, 0);
    check("copy shared -> fragment f32 -> fragment bf16 -> global" + at, Y, viaBf16, 0, 0);
    check("copy global -> fragment, parallel, -> global" + at, W, affine, 1e-6, 1e-6);
}

void reductions(int M) {
    const int N = 256;
    auto X = random<float>(size_t(M) * N, 22, -3.0, 3.0);
    std::vector<float> ymax(M), ymin(M), ysum(M), yabssum(M), yabsmax(M), yacc(M), ycol(N, 0.25f);
    std::vector<double> wmax(M, -INFINITY), wmin(M, INFINITY), wsum(M, 0), wabssum(M, 0), wabsmax(M, 0), wacc(M),
        wcol(N, 0.25);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double v = X[size_t(i) * N + j];
            wmax[i] = std::max(wmax[i], v);
            wmin[i] = std::min(wmin[i], v);
            wsum[i] += v;
            wabssum[i] += std::fabs(v);
            wabsmax[i] = std::max(wabsmax[i], std::fabs(v));
            wcol[j] += v;
        }
    for (int i = 0; i < M; ++i) wacc[i] = 0.5 + wsum[i];
    expectStatus("reductions status",
                 tl_kernels::reductions(X.data(), ymax.data(), ymin.data(), ysum.data(), yabssum.data(), yabsmax.data(),
                                        yacc.data(), ycol.data(), M),
                 0);
    std::string at = " M=" + std::to_string(M);
    check("reduce_max" + at, ymax, wmax, 0, 0);
    check("reduce_min" + at, ymin, wmin, 0, 0);
    check("reduce_sum" + at, ysum, wsum, 1e-4, 1e-5);
    check("reduce_abssum" + at, yabssum, wabssum, 1e-4, 1e-5);
    check("reduce_absmax" + at, yabsmax, wabsmax, 0, 0);
    check("reduce_sum clear=false" + at, yacc, wacc, 1e-4, 1e-5);
    check("reduce_sum dim=0 + atomic_add" + at, ycol, wcol, 1e-3, 1e-5);

    const int n = 64;
    auto S = random<float>(size_t(M) * n, 23, -3.0, 3.0);
    std::vector<float> y(M, -7.0f);
    std::vector<double> want(M);
    for (int i = 0; i < M; ++i) {
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < n; ++j) mx = std::max(mx, double(S[size_t(i) * n + j])), sum += S[size_t(i) * n + j];
        want[i] = mx + sum;
    }
    // Y (length M) is written with 4-float vectors on GPUs: M must be a multiple of 4 there.
    if (launched("shared_reductions" + at, tl_kernels::shared_reductions(S.data(), y.data(), M), !kGpu || M % 4 == 0, y,
                 -7.0))
        check("reduce_max then reduce_sum clear=false on shared buffers" + at, y, want, 1e-4, 1e-5);
}

void cumsum(int M) {
    const int N = 64;
    auto X = random<float>(size_t(M) * N, 23);
    std::vector<float> Y(X.size(), -7.0f), Z(X.size(), -7.0f);
    std::vector<double> wy(X.size()), wz(X.size());
    for (int i = 0; i < M; ++i) {
        double run = 0;
        for (int j = 0; j < N; ++j) wy[size_t(i) * N + j] = run += X[size_t(i) * N + j];
        run = 0;
        for (int j = N - 1; j >= 0; --j) wz[size_t(i) * N + j] = run += X[size_t(i) * N + j];
    }
    expectStatus("cumsum status", tl_kernels::cumsum_rows(X.data(), Y.data(), Z.data(), M), 0);
    check("cumsum shared -> fragment M=" + std::to_string(M), Y, wy, 1e-5, 1e-5);
    check("cumsum reverse in place M=" + std::to_string(M), Z, wz, 1e-5, 1e-5);
}

void gemms(int M, int N, int K) {
    std::string at = " " + dims({M, N, K});
    {  // NT, f16 -> f32
        auto A = random<tl::half>(size_t(M) * K, 31), B = random<tl::half>(size_t(N) * K, 32);
        std::vector<float> C(size_t(M) * N, -7.0f);
        auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                           [&](int k, int j) { return toDouble(B[size_t(j) * K + k]); });
        expectStatus("gemm_nt status", tl_kernels::gemm_nt(A.data(), B.data(), C.data(), M, K, N), 0);
        check("gemm transpose_B (f16 -> f32)" + at, C, want, 1e-4, 1e-4);
    }
    {  // TN, bf16 -> bf16
        auto A = random<tl::bfloat16>(size_t(K) * M, 33), B = random<tl::bfloat16>(size_t(K) * N, 34);
        std::vector<tl::bfloat16> C(size_t(M) * N, tl::bfloat16(-7.0f));
        auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(k) * M + i]); },
                           [&](int k, int j) { return toDouble(B[size_t(k) * N + j]); });
        expectStatus("gemm_tn status", tl_kernels::gemm_tn(A.data(), B.data(), C.data(), K, M, N), 0);
        check("gemm transpose_A (bf16)" + at, C, want, 2e-2, 1e-2);
    }
    {  // TT, f32
        auto A = random<float>(size_t(K) * M, 35), B = random<float>(size_t(N) * K, 36);
        std::vector<float> C(size_t(M) * N, -7.0f);
        auto want = matmul(M, N, K, [&](int i, int k) { return double(A[size_t(k) * M + i]); },
                           [&](int k, int j) { return double(B[size_t(j) * K + k]); });
        expectStatus("gemm_tt status", tl_kernels::gemm_tt(A.data(), B.data(), C.data(), K, M, N), 0);
        check("gemm transpose_A and transpose_B (f32)" + at, C, want, 1e-4, 1e-5);
    }
    {  // NN, i8 -> i32, exact
        auto A = random<int8_t>(size_t(M) * K, 37, -128, 127), B = random<int8_t>(size_t(K) * N, 38, -128, 127);
        std::vector<int32_t> C(size_t(M) * N, -7);
        auto want = matmul(M, N, K, [&](int i, int k) { return double(A[size_t(i) * K + k]); },
                           [&](int k, int j) { return double(B[size_t(k) * N + j]); });
        // i8 rows move in 16-element vectors on GPUs.
        if (launched("gemm_i8" + at, tl_kernels::gemm_i8(A.data(), B.data(), C.data(), M, K, N),
                     !kGpu || (K % 16 == 0 && N % 16 == 0), C, -7.0))
            check("gemm i8 -> i32" + at, C, want, 0, 0);
    }
    {  // NN with A in a fragment, f16 -> f16
        auto A = random<tl::half>(size_t(M) * K, 39), B = random<tl::half>(size_t(K) * N, 40);
        std::vector<tl::half> C(size_t(M) * N, tl::half(-7.0f));
        auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                           [&](int k, int j) { return toDouble(B[size_t(k) * N + j]); });
        expectStatus("gemm_rs status", tl_kernels::gemm_rs(A.data(), B.data(), C.data(), M, K, N), 0);
        check("gemm fragment A (f16)" + at, C, want, 1e-2, 1e-2);
    }
    {  // NN, f16 accumulator, annotated shared layouts; inputs in [-1, 1): sums stay well
       // inside f16, whose rounding of the running sum sets the tolerance.
        auto A = random<tl::half>(size_t(M) * K, 41), B = random<tl::half>(size_t(K) * N, 42);
        std::vector<tl::half> C(size_t(M) * N, tl::half(-7.0f));
        auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                           [&](int k, int j) { return toDouble(B[size_t(k) * N + j]); });
        expectStatus("gemm_annotated status", tl_kernels::gemm_annotated(A.data(), B.data(), C.data(), M, K, N), 0);
        check("gemm f16 accumulator, padded / row-major shared (f16)" + at, C, want, 3e-2, 2e-2);
    }
}

// Mixed fp8 (e4m3 x e5m2, e5m2 x e4m3) -> f32, B given as [N, K]; the reference multiplies
// the fp8 values in double. fp8 rows move in 16-byte pieces on GPUs (TMA rows on sm90 too).
void mixedFp8Gemms(int M, int N, int K) {
    std::string at = " " + dims({M, N, K});
    auto A4 = random<tl::fp8_e4m3>(size_t(M) * K, 45), B4 = random<tl::fp8_e4m3>(size_t(N) * K, 46);
    auto A5 = random<tl::fp8_e5m2>(size_t(M) * K, 47), B5 = random<tl::fp8_e5m2>(size_t(N) * K, 48);
    auto product = [&](const auto& A, const auto& B) {
        return matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                      [&](int k, int j) { return toDouble(B[size_t(j) * K + k]); });
    };
    bool aligned = !kGpu || (K % 16 == 0 && N % 4 == 0);
    std::vector<float> C(size_t(M) * N, -7.0f);
    if (launched("gemm_e4m3_e5m2" + at, tl_kernels::gemm_e4m3_e5m2(A4.data(), B5.data(), C.data(), M, K, N), aligned,
                 C, -7.0))
        check("gemm e4m3 x e5m2 -> f32" + at, C, product(A4, B5), 1e-3, 1e-4);
    std::fill(C.begin(), C.end(), -7.0f);
    if (launched("gemm_e5m2_e4m3" + at, tl_kernels::gemm_e5m2_e4m3(A5.data(), B4.data(), C.data(), M, K, N), aligned,
                 C, -7.0))
        check("gemm e5m2 x e4m3 -> f32" + at, C, product(A5, B4), 1e-3, 1e-4);
}

// The software pipeline (sm80: cp.async into versioned shared buffers) against the same
// product, for K that gives no iteration, fewer iterations than stages, and partial tiles.
void pipelinedGemms(int M, int N, int K) {
    std::string at = " " + dims({M, N, K});
    auto A = random<tl::half>(size_t(M) * K, 41), B = random<tl::half>(size_t(K) * N, 42);
    auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                       [&](int k, int j) { return toDouble(B[size_t(k) * N + j]); });
    auto run = [&](const std::string& name, const std::function<int(float*)>& launch, double perIteration) {
        std::vector<float> C(size_t(M) * N, -7.0f);
        expectStatus(name + " status" + at, launch(C.data()), 0);
        std::vector<double> expect = want;
        int n = (K + 15) / 16;  // plus perIteration * k for every iteration k of ceildiv(K, 16)
        for (auto& v : expect) v += perIteration * n * (n - 1) / 2;
        check("pipelined " + name + at, C, expect, 1e-4, 1e-4);
    };
    run("gemm_s2", [&](float* C) { return int(tl_kernels::gemm_s2(A.data(), B.data(), C, M, K, N)); }, 0);
    run("gemm_s3", [&](float* C) { return int(tl_kernels::gemm_s3(A.data(), B.data(), C, M, K, N)); }, 0);
    run("gemm_s4", [&](float* C) { return int(tl_kernels::gemm_s4(A.data(), B.data(), C, M, K, N)); }, 0.5);
    run("gemm_lists", [&](float* C) { return int(tl_kernels::gemm_lists(A.data(), B.data(), C, M, K, N)); }, 0);
    run("gemm_rows", [&](float* C) { return int(tl_kernels::gemm_rows(A.data(), B.data(), C, M, K, N)); }, 0);
    run("gemm_overlap_s2", [&](float* C) { return int(tl_kernels::gemm_overlap_s2(A.data(), B.data(), C, M, K, N)); }, 0);
    run("gemm_inferred", [&](float* C) { return int(tl_kernels::gemm_inferred(A.data(), B.data(), C, M, K, N)); }, 0);
    {  // two batches, one pipeline each
        auto A2 = random<tl::half>(2 * size_t(M) * K, 43), B2 = random<tl::half>(2 * size_t(K) * N, 44);
        std::vector<double> expect;
        for (int b = 0; b < 2; ++b) {
            auto w = matmul(M, N, K, [&](int i, int k) { return toDouble(A2[(size_t(b) * M + i) * K + k]); },
                            [&](int k, int j) { return toDouble(B2[(size_t(b) * K + k) * N + j]); });
            expect.insert(expect.end(), w.begin(), w.end());
        }
        std::vector<float> C(2 * size_t(M) * N, -7.0f);
        expectStatus("gemm_batched status" + at, tl_kernels::gemm_batched(A2.data(), B2.data(), C.data(), 2, M, K, N), 0);
        check("pipelined gemm_batched" + at, C, expect, 1e-4, 1e-4);
        // f16 results, through the staged epilogue.
        std::vector<tl::half> H(2 * size_t(M) * N, tl::half(-7.0f));
        expectStatus("gemm_batched_f16 status" + at, tl_kernels::gemm_batched_f16(A2.data(), B2.data(), H.data(), 2, M, K, N), 0);
        check("pipelined gemm_batched_f16 (direct stores: no free bytes in the loop)" + at, H, expect, 1e-2, 1e-2);
    }
    auto runHalf = [&](const std::string& name, const std::function<int(tl::half*)>& launch) {
        std::vector<tl::half> C(size_t(M) * N, tl::half(-7.0f));
        expectStatus(name + " status" + at, launch(C.data()), 0);
        check("pipelined " + name + at, C, want, 1e-2, 1e-2);
    };
    runHalf("gemm_f16_out (staged epilogue)",
            [&](tl::half* C) { return int(tl_kernels::gemm_f16_out(A.data(), B.data(), C, M, K, N)); });
    runHalf("gemm_user_stage (shared staging on reused bytes)",
            [&](tl::half* C) { return int(tl_kernels::gemm_user_stage(A.data(), B.data(), C, M, K, N)); });
}

// f16 results of A @ B^T, 128 columns a tile: on sm90 the epilogue stores the staged tile as two
// TMA boxes, clipped at the tensor's edges (sizes that are not tile multiples check that).
void stagedNtGemm(int M, int N, int K) {
    std::string at = " " + dims({M, N, K});
    auto A = random<tl::half>(size_t(M) * K, 47), B = random<tl::half>(size_t(N) * K, 48);
    auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                       [&](int k, int j) { return toDouble(B[size_t(j) * K + k]); });
    std::vector<tl::half> C(size_t(M) * N, tl::half(-7.0f));
    expectStatus("gemm_nt_f16_out status" + at, tl_kernels::gemm_nt_f16_out(A.data(), B.data(), C.data(), M, K, N), 0);
    check("gemm_nt_f16_out (staged epilogue, 256-byte rows)" + at, C, want, 1e-2, 1e-2);
}

// Inputs the GPU lowering cannot take get an error code and no launch: a base pointer off the
// 16-byte grid, and rows 24 bytes apart (K = 12). On sm90 the A and B tiles of gemm_s3 are TMA
// loads, so it is the launcher's tensor maps (tl::make_tensor_map_2d) that refuse them; on
// sm80 the cp.async alignment checks. The cpu target takes both.
void refusedInputs() {
    const int M = 64, N = 64;
    for (int K : {16, 12}) {
        std::string at = " " + dims({M, N, K});
        auto A = random<tl::half>(size_t(M) * K + 8, 45), B = random<tl::half>(size_t(K) * N, 46);
        std::vector<float> C(size_t(M) * N, -7.0f);
        const tl::half* a = K == 16 ? A.data() + 1 : A.data();  // 2 bytes off the 16-byte grid
        launched("gemm_s3 misaligned or strided A" + at, int(tl_kernels::gemm_s3(a, B.data(), C.data(), M, K, N)),
                 !kGpu, C, -7.0);
    }
    // The same for the output: C off the 16-byte grid, and C's rows 132 bytes apart (N = 66; B is
    // [N, K], so only C's row stride is off). On sm90 the epilogue's TMA store map refuses them, on
    // sm80 and gfx90a the vector stores' checks.
    for (int N2 : {64, 66}) {
        const int K = 32;
        std::string at = " " + dims({M, N2, K});
        auto A = random<tl::half>(size_t(M) * K, 49), B = random<tl::half>(size_t(N2) * K, 50);
        std::vector<tl::half> C(size_t(M) * N2 + 8, tl::half(-7.0f));
        tl::half* c = N2 == 64 ? C.data() + 1 : C.data();  // 2 bytes off the 16-byte grid
        int status = int(tl_kernels::gemm_nt_f16_out(A.data(), B.data(), c, M, K, N2));
        launched("gemm_nt_f16_out misaligned or strided C" + at, status, !kGpu, C, -7.0);
    }
}

// Split-K (tests/run/kernels/split_k.tl): `let`s between the grid and the pipelined loop give
// each z-block its run of k-tiles (on sm90 the warp-specialised producer needs them too, and
// some runs are empty); the partial products go to slices of C, or are added into C element
// by element with atomic_add. Each slice against its own double reference.
void splitKGemms(int M, int N, int K) {
    std::string at = " " + dims({M, N, K});
    const int splits = 3, bk = 16;
    auto A = random<tl::half>(size_t(M) * K, 51), B = random<tl::half>(size_t(K) * N, 52);
    auto range = [&](int lo, int hi) {
        return matmul(M, N, std::max(0, hi - lo), [&](int i, int k) { return toDouble(A[size_t(i) * K + lo + k]); },
                      [&](int k, int j) { return toDouble(B[size_t(lo + k) * N + j]); });
    };
    const int tiles = (K + bk - 1) / bk, perSplit = (tiles + splits - 1) / splits;
    std::vector<double> parts;
    for (int z = 0; z < splits; ++z) {
        auto p = range(std::min(K, z * perSplit * bk), std::min(K, (z + 1) * perSplit * bk));
        parts.insert(parts.end(), p.begin(), p.end());
    }
    std::vector<float> C(splits * size_t(M) * N, -7.0f);
    expectStatus("gemm_split_parts status" + at,
                 tl_kernels::gemm_split_parts(A.data(), B.data(), C.data(), M, K, N), 0);
    check("split-K partial products, lets before the pipelined loop" + at, C, parts, 1e-4, 1e-4);
    std::vector<float> sum(size_t(M) * N, 0.0f);
    expectStatus("gemm_split_atomic status" + at,
                 tl_kernels::gemm_split_atomic(A.data(), B.data(), sum.data(), M, K, N), 0);
    check("split-K, partials added by element atomic_add" + at, sum, range(0, K), 1e-4, 1e-4);
}

// Element atomic_add of i32 and f16 under contention: a histogram and per-bin sums of weights
// that are multiples of 1/4 (f16 sums of them stay exact in any order).
void histogram(int n) {
    const int bins = 16;
    auto X = random<int32_t>(size_t(n), 53, 0, bins - 1);
    auto q = random<int32_t>(size_t(n), 54, -4, 4);
    std::vector<tl::half> W(n);
    std::vector<double> count(bins, 0), sum(bins, 0);
    for (int i = 0; i < n; ++i) {
        W[i] = tl::half(float(q[i]) / 4);
        count[X[i]] += 1;
        sum[X[i]] += q[i] / 4.0;
    }
    std::vector<int32_t> H(bins, 0);
    std::vector<tl::half> S(bins, tl::half(0.0f));
    // W's rows move in 16-byte vectors on GPUs.
    if (launched("histogram n=" + std::to_string(n), tl_kernels::histogram(X.data(), W.data(), H.data(), S.data(), n),
                 !kGpu || n % 8 == 0, H, 0.0)) {
        check("atomic_add element i32 (histogram) n=" + std::to_string(n), H, count, 0, 0);
        check("atomic_add element f16 (per-bin sums) n=" + std::to_string(n), S, sum, 0, 0);
    }
}

} // namespace

int main() {
    copyCast(64, 128);
    copyCast(45, 104);
    copyCast(45, 100);
    reductions(16);
    reductions(9);
    cumsum(16);
    cumsum(11);
    gemms(128, 128, 64);
    gemms(72, 88, 40);
    gemms(40, 96, 48);
    // K = 0: no iteration; 8 and 16: one (partial, full); 40: three of 16 (partial), two of 32;
    // 56: four; 200: thirteen of 16 and seven of 32, the last partial.
    for (int K : {0, 8, 16, 40, 56, 200}) pipelinedGemms(72, 88, K);
    pipelinedGemms(128, 64, 64);
    mixedFp8Gemms(64, 128, 128);
    mixedFp8Gemms(72, 136, 208);  // partial tiles in M and N, the last K tile partial
    // 33 k-tiles of 16 (the last partial): many rounds of each stage's barriers, where sm90's
    // wgmma groups left in flight would read a stage released too early.
    pipelinedGemms(128, 64, 520);
    stagedNtGemm(72, 200, 40);  // partial tiles in both directions, 3 iterations (the last partial)
    stagedNtGemm(128, 256, 64);
    refusedInputs();
    // Split-K: runs of 1 (K = 40: 3 tiles), empty runs (K = 8, 16), partial runs and tiles (200).
    for (int K : {8, 16, 40, 200}) splitKGemms(72, 88, K);
    splitKGemms(128, 64, 520);
    histogram(1000);
    histogram(1003);
    return summary();
}

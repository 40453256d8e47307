// Run layer: every tile primitive on the cpu target against double-precision references.
#include "harness.h"

#include "block_scalars.h"
#include "copy_cast.h"
#include "cumsum.h"
#include "dequant_int4.h"
#include "fragment_rows.h"
#include "fused_stores.h"
#include "gemm_fp8_mixed.h"
#include "gemm_persistent.h"
#include "gemm_pipeline.h"
#include "gemm_variants.h"
#include "pipelined_range.h"
#include "bits.h"
#include "mla_decode.h"
#include "mla_decode_wg.h"
#include "overlap_copy.h"
#include "multi_grid.h"
#include "reductions.h"
#include "while_loop.h"
#include "row_vectors.h"
#include "split_k.h"
#include "whole_tensor.h"
#include "whole_tile.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>

using namespace harness;

void wholeTensorForms();  // run_whole_tensor.cpp
void splitKGemms();       // run_split_k.cpp
void wholeTensorBatched();  // run_whole_tensor_batched.cpp
void clusterGemmX(int M, int N, int K);  // run_cluster.cpp
void clusterGemmM(int M, int N, int K);
void flashAttentionFp8(int Bn, int S, int H);  // run_attention_fp8.cpp

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
    // f16 rows move in 8-element vectors on GPUs; other N run the general variant.
    expectStatus("copy_cast status" + at, tl_kernels::copy_cast(X.data(), Y.data(), Z.data(), W.data(), M, N), 0);
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


    // NaN elements are skipped by max, min and absmax (as std::fmax skips them), wherever they
    // lie: first or last in a row, in any lane. The row's largest and smallest values sit early
    // in a column that ends in NaN (the cpu's lane i % 64 of 64), where taking the NaN would
    // lose them. Sums are not checked here (NaN there).
    auto Xn = X;
    std::vector<double> nmax(M, -INFINITY), nmin(M, INFINITY), nabsmax(M, 0);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float& v = Xn[size_t(i) * N + j];
            const int lane = i % 64;
            if (j == lane) v = 10.0f;
            if (j == lane + 64) v = -9.0f;
            if (j == 0 || j == N - 1 || j == N - 64 + lane || j % 37 == i % 5 + 3 || (i % 3 == 0 && j % 64 > 55)) v = NAN;
            else nmax[i] = std::max(nmax[i], double(v)), nmin[i] = std::min(nmin[i], double(v)),
                 nabsmax[i] = std::max(nabsmax[i], std::fabs(double(v)));
        }
    expectStatus("reductions with NaN status",
                 tl_kernels::reductions(Xn.data(), ymax.data(), ymin.data(), ysum.data(), yabssum.data(),
                                        yabsmax.data(), yacc.data(), ycol.data(), M),
                 0);
    check("reduce_max skipping NaN" + at, ymax, nmax, 0, 0);
    check("reduce_min skipping NaN" + at, ymin, nmin, 0, 0);
    check("reduce_absmax skipping NaN" + at, yabsmax, nabsmax, 0, 0);

    const int n = 64;
    auto S = random<float>(size_t(M) * n, 23, -3.0, 3.0);
    std::vector<float> y(M, -7.0f);
    std::vector<double> want(M);
    for (int i = 0; i < M; ++i) {
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < n; ++j) mx = std::max(mx, double(S[size_t(i) * n + j])), sum += S[size_t(i) * n + j];
        want[i] = mx + sum;
    }
    // Y (length M) is written with 4-float vectors on GPUs when M is a multiple of 4.
    expectStatus("shared_reductions status" + at, tl_kernels::shared_reductions(S.data(), y.data(), M), 0);
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
    {  // a [1, bm, bn] accumulator
        auto A = random<tl::half>(size_t(M) * K, 61), B = random<tl::half>(size_t(K) * N, 62);
        std::vector<float> C(size_t(M) * N, -7.0f);
        auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                           [&](int k, int j) { return toDouble(B[size_t(k) * N + j]); });
        expectStatus("gemm_unit_acc status", tl_kernels::gemm_unit_acc(A.data(), B.data(), C.data(), M, K, N), 0);
        check("gemm into a [1, M, N] accumulator" + at, C, want, 1e-4, 1e-4);
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
        // i8 rows move in 16-element vectors on GPUs when K and N allow.
        expectStatus("gemm_i8 status" + at, tl_kernels::gemm_i8(A.data(), B.data(), C.data(), M, K, N), 0);
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

// Hopper's fp8 wgmma adds its products with fewer bits than an f32 accumulator (errors of
// about 4e-4 relative were measured on an H200 at K = 128, where the simulator is exact).
constexpr double kFp8Atol = 1e-2, kFp8Rtol = 2e-3;

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
    std::vector<float> C(size_t(M) * N, -7.0f);
    expectStatus("gemm_e4m3_e5m2 status" + at, tl_kernels::gemm_e4m3_e5m2(A4.data(), B5.data(), C.data(), M, K, N), 0);
    check("gemm e4m3 x e5m2 -> f32" + at, C, product(A4, B5), kFp8Atol, kFp8Rtol);
    std::fill(C.begin(), C.end(), -7.0f);
    expectStatus("gemm_e5m2_e4m3 status" + at, tl_kernels::gemm_e5m2_e4m3(A5.data(), B4.data(), C.data(), M, K, N), 0);
    check("gemm e5m2 x e4m3 -> f32" + at, C, product(A5, B4), kFp8Atol, kFp8Rtol);
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
    run("gemm_unroll2_ws", [&](float* C) { return int(tl_kernels::gemm_unroll2_ws(A.data(), B.data(), C, M, K, N)); }, 0);
    run("gemm_unroll2_steady",
        [&](float* C) { return int(tl_kernels::gemm_unroll2_steady(A.data(), B.data(), C, M, K, N)); }, 0);
    run("gemm_unroll3_ws", [&](float* C) { return int(tl_kernels::gemm_unroll3_ws(A.data(), B.data(), C, M, K, N)); }, 0);
    run("gemm_unroll3_steady",
        [&](float* C) { return int(tl_kernels::gemm_unroll3_steady(A.data(), B.data(), C, M, K, N)); }, 0);
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

// Persistent gemms (kernels/gemm_persistent.tl): the simulator's 3 SMs give each block several
// tiles (M x N = 200 x 200: 16 tiles of 64 x 64, 8 of 128 x 64), so the loop over tiles, its
// rasterisation and (sm90) the mbarrier phases carried from tile to tile are all exercised.
void persistentGemms(int M, int N, int K) {
    std::string at = " " + dims({M, N, K});
    auto A = random<tl::half>(size_t(M) * K, 51), B = random<tl::half>(size_t(K) * N, 52);
    auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                       [&](int k, int j) { return toDouble(B[size_t(k) * N + j]); });
    auto run = [&](const std::string& name, const std::function<int(float*)>& launch) {
        std::vector<float> C(size_t(M) * N, -7.0f);
        expectStatus(name + " status" + at, launch(C.data()), 0);
        check("persistent " + name + at, C, want, 1e-4, 1e-4);
    };
    run("gemm_persist", [&](float* C) { return int(tl_kernels::gemm_persist(A.data(), B.data(), C, M, K, N)); });
    run("gemm_persist_unroll2",
        [&](float* C) { return int(tl_kernels::gemm_persist_unroll2(A.data(), B.data(), C, M, K, N)); });
    run("gemm_persist_steady",
        [&](float* C) { return int(tl_kernels::gemm_persist_steady(A.data(), B.data(), C, M, K, N)); });
    {
        std::vector<tl::half> C(size_t(M) * N, tl::half(-7.0f));
        expectStatus("gemm_persist_f16 status" + at, tl_kernels::gemm_persist_f16(A.data(), B.data(), C.data(), M, K, N), 0);
        check("persistent gemm_persist_f16 (staged epilogue)" + at, C, want, 1e-2, 1e-2);
    }
    {  // three batches on a 3-D grid
        const int S = 3;
        auto A3 = random<tl::half>(S * size_t(M) * K, 53), B3 = random<tl::half>(S * size_t(K) * N, 54);
        std::vector<double> expect;
        for (int b = 0; b < S; ++b) {
            auto w = matmul(M, N, K, [&](int i, int k) { return toDouble(A3[(size_t(b) * M + i) * K + k]); },
                            [&](int k, int j) { return toDouble(B3[(size_t(b) * K + k) * N + j]); });
            expect.insert(expect.end(), w.begin(), w.end());
        }
        std::vector<float> C(S * size_t(M) * N, -7.0f);
        expectStatus("gemm_persist_batched status" + at,
                     tl_kernels::gemm_persist_batched(A3.data(), B3.data(), C.data(), S, M, K, N), 0);
        check("persistent gemm_persist_batched" + at, C, expect, 1e-4, 1e-4);
    }
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

// Two grids through global scratch (multi_grid.tl): the workspace from the header's size
// function. A bias one element into its buffer (a view with an offset: only 4-byte aligned),
// which the second grid's vector loads cannot take, runs the group's general variant on the GPU
// (both grids, on the same workspace).
void multiGrid(int M, int N, int K) {
    std::string at = " " + dims({M, N, K});
    auto A = random<tl::half>(size_t(M) * K, 61), B = random<tl::half>(size_t(K) * N, 62);
    auto bias = random<float>(size_t(N) + 4, 63);
    const size_t bytes = tl_kernels::gemm_then_bias_workspace_size(M, K, N);
    expectStatus("gemm_then_bias workspace_size" + at, int(bytes), int((size_t(M) * N * 4 + 255) / 256 * 256));
    std::vector<float> workspace(bytes / 4 + 4, -3.0f);  // 16-byte aligned (operator new)
    for (int shift : {1, 0}) {
        auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                           [&](int k, int j) { return toDouble(B[size_t(k) * N + j]); });
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) want[size_t(i) * N + j] = want[size_t(i) * N + j] * 0.5 + bias[j + shift];
        std::vector<tl::half> C(size_t(M) * N, tl::half(-7.0f));
        int status = int(tl_kernels::gemm_then_bias(A.data(), B.data(), bias.data() + shift, C.data(), M, K, N,
                                                    workspace.data()));
        std::string what = "gemm_then_bias" + std::string(shift ? " (bias one element in)" : "") + at;
        expectStatus(what + " status", status, 0);
        check(what, C, want, 1e-2, 2e-3);
    }
}

// Offset views and odd rows: a base pointer one element off the 16-byte grid, and rows 24 bytes
// apart (K = 12), which the fast path's cp.async (sm80) or TMA loads (sm90) cannot take: the
// launcher runs the general variant. The cpu target takes both as they are.
void offsetInputs() {
    const int M = 64, N = 64;
    for (int K : {16, 12}) {
        std::string at = " " + dims({M, N, K});
        auto A = random<tl::half>(size_t(M) * K + 8, 45), B = random<tl::half>(size_t(K) * N, 46);
        std::vector<float> C(size_t(M) * N, -7.0f);
        const tl::half* a = K == 16 ? A.data() + 1 : A.data();  // 2 bytes off the 16-byte grid
        auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(a[size_t(i) * K + k]); },
                           [&](int k, int j) { return toDouble(B[size_t(k) * N + j]); });
        expectStatus("gemm_s3 offset or odd-row A status" + at, int(tl_kernels::gemm_s3(a, B.data(), C.data(), M, K, N)), 0);
        check("gemm_s3 offset or odd-row A" + at, C, want, 1e-2, 1e-2);
    }
    // The same for the output: C off the 16-byte grid, and C's rows 132 bytes apart (N = 66; B is
    // [N, K], so only C's row stride is odd), which sm90's TMA stores and sm80's vector stores
    // cannot take; around C nothing is written.
    for (int N2 : {64, 66}) {
        const int K = 32;
        std::string at = " " + dims({M, N2, K});
        auto A = random<tl::half>(size_t(M) * K, 49), B = random<tl::half>(size_t(N2) * K, 50);
        std::vector<tl::half> C(size_t(M) * N2 + 8, tl::half(-7.0f));
        const size_t offset = N2 == 64 ? 1 : 0;  // 2 bytes off the 16-byte grid
        int status = int(tl_kernels::gemm_nt_f16_out(A.data(), B.data(), C.data() + offset, M, K, N2));
        expectStatus("gemm_nt_f16_out offset or odd-row C status" + at, status, 0);
        std::vector<double> want = matmul(
            M, N2, K, [&](int i, int k) { return double(float(A[size_t(i) * K + k])); },
            [&](int k, int j) { return double(float(B[size_t(j) * K + k])); });
        std::vector<tl::half> got(C.begin() + offset, C.begin() + offset + size_t(M) * N2);
        check("gemm_nt_f16_out offset or odd-row C" + at, got, want, 1e-2, 1e-2);
        std::vector<tl::half> around(C.begin(), C.begin() + offset);
        around.insert(around.end(), C.begin() + offset + size_t(M) * N2, C.end());
        check("gemm_nt_f16_out elements around C untouched" + at, around, std::vector<double>(around.size(), -7.0), 0, 0);
    }
}

// `while` loops of the whole block: persistent blocks walk the tiles with a `var` the body
// advances; the elementwise kernel also counts its visits, the gemm pipelines its K loop per tile.
void whileLoops(int N, int M2, int N2, int K2) {
    std::string at = " N=" + std::to_string(N);
    auto X = random<float>(size_t(N), 51, -4.0, 4.0);
    std::vector<float> Y(size_t(N), -7.0f);
    std::vector<double> want(X.size());
    for (int j = 0; j < N; ++j) want[size_t(j)] = 2.0 * X[size_t(j)] + j / 64 + (j / 64 / 3) * 0.25;
    expectStatus("while_tiles status" + at, tl_kernels::while_tiles(X.data(), Y.data(), N), 0);
    check("while over tiles (3 persistent blocks)" + at, Y, want, 1e-6, 1e-6);

    // Each block halves its tile until its largest magnitude is below 1 (blocks scaled by 1 to
    // 16, so they take different numbers of steps); halving is exact.
    const int blocks = (N + 127) / 128;
    auto S = X;
    for (int j = 0; j < N; ++j) S[size_t(j)] *= float(1 << (j / 128 % 5));
    std::vector<float> H(size_t(N), -7.0f);
    std::vector<int32_t> steps(size_t(blocks), -7);
    std::vector<double> wantH(S.size()), wantSteps(steps.size());
    for (int b = 0; b < blocks; ++b) {
        double m = 0;
        for (int j = b * 128; j < std::min(N, b * 128 + 128); ++j) m = std::max(m, std::fabs(double(S[size_t(j)])));
        int s = 0;
        for (; m >= 1.0; m *= 0.5) ++s;
        wantSteps[size_t(b)] = s;
        for (int j = b * 128; j < std::min(N, b * 128 + 128); ++j) wantH[size_t(j)] = std::ldexp(double(S[size_t(j)]), -s);
    }
    expectStatus("while_halve status" + at, tl_kernels::while_halve(S.data(), H.data(), steps.data(), N, blocks), 0);
    check("while on a shared element the body rewrites: values" + at, H, wantH, 0, 0);
    check("while on a shared element the body rewrites: steps" + at, steps, wantSteps, 0, 0);

    at = " " + dims({M2, N2, K2});
    auto A = random<tl::half>(size_t(M2) * K2, 52), B = random<tl::half>(size_t(K2) * N2, 53);
    auto prod = matmul(M2, N2, K2, [&](int i, int k) { return toDouble(A[size_t(i) * K2 + k]); },
                       [&](int k, int j) { return toDouble(B[size_t(k) * N2 + j]); });
    std::vector<float> C(size_t(M2) * N2, -7.0f);
    expectStatus("gemm_persistent status" + at, tl_kernels::gemm_persistent(A.data(), B.data(), C.data(), M2, K2, N2), 0);
    check("gemm_persistent (while over output tiles, pipelined K)" + at, C, prod, 1e-4, 1e-4);
}

// pipelined(start, stop, stages = ...): split-K, each of S splits over its share of the
// ceildiv(K, 16) k tiles (the last ones fewer or none), against partial products; stages 0 and 1;
// stream-K, whose blocks pipeline sub-ranges of a tile's K loop inside a `while`.
void pipelinedRanges(int M, int N, int K, int S) {
    std::string at = " " + dims({M, N, K}) + " S=" + std::to_string(S);
    auto A = random<tl::half>(size_t(M) * K, 61), B = random<tl::half>(size_t(K) * N, 62);
    const int kt = (K + 15) / 16, per = (kt + S - 1) / S;
    auto splits = [&](double perK) {
        std::vector<double> want;
        for (int s = 0; s < S; ++s) {
            const int lo = s * per, hi = std::min(kt, (s + 1) * per);
            auto w = matmul(M, N, K,
                            [&](int i, int k) { return k / 16 >= lo && k / 16 < hi ? toDouble(A[size_t(i) * K + k]) : 0.0; },
                            [&](int k, int j) { return toDouble(B[size_t(k) * N + j]); });
            double extra = 0;
            for (int k = lo; k < hi; ++k) extra += perK * k;
            for (auto& v : w) v += extra;
            want.insert(want.end(), w.begin(), w.end());
        }
        return want;
    };
    auto run = [&](const std::string& name, const std::function<int(float*)>& launch, double perK) {
        std::vector<float> C(size_t(S) * M * N, -7.0f);
        expectStatus(name + " status" + at, launch(C.data()), 0);
        check(name + at, C, splits(perK), 1e-4, 1e-4);
    };
    run("pipelined(lo, hi, stages = 2) written out",
        [&](float* C) { return int(tl_kernels::gemm_split_inline(A.data(), B.data(), C, M, K, N, S)); }, 0);
    run("pipelined(k_lo, k_hi, stages = 3) from lets, reading k",
        [&](float* C) { return int(tl_kernels::gemm_split_lets(A.data(), B.data(), C, M, K, N, S)); }, 0.5);
    run("pipelined(lo, hi, stages = 1)",
        [&](float* C) { return int(tl_kernels::gemm_split_s1(A.data(), B.data(), C, M, K, N, S)); }, 0);
    auto whole = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                        [&](int k, int j) { return toDouble(B[size_t(k) * N + j]); });
    std::vector<float> C(size_t(M) * N, -7.0f);
    expectStatus("gemm_s0 status" + at, tl_kernels::gemm_s0(A.data(), B.data(), C.data(), M, K, N), 0);
    check("pipelined(n, num_stages = 0)" + at, C, whole, 1e-4, 1e-4);
    std::fill(C.begin(), C.end(), 0.0f);
    expectStatus("gemm_stream_k status" + at, tl_kernels::gemm_stream_k(A.data(), B.data(), C.data(), M, K, N), 0);
    check("stream-K (while over (tile, k) runs, pipelined sub-ranges, atomic_add)" + at, C, whole, 1e-4, 1e-4);
}

// reinterpret and clamp: f32 bits taken apart and put back, f16 and e4m3 codes.
void floatBits(int N) {
    std::string at = " N=" + std::to_string(N);
    auto X = random<float>(size_t(N), 71, -4.0, 4.0);
    for (auto& x : X)
        if (std::fabs(x) < 1e-3f) x = 0.5f;  // normal numbers, well inside f16's range
    std::vector<int32_t> E(size_t(N), -7);
    std::vector<float> Y(size_t(N), -7.0f), Z(size_t(N), -7.0f), Q(size_t(N), -7.0f);
    std::vector<uint16_t> H(size_t(N), 7);
    std::vector<double> wE(X.size()), wY(X.size()), wZ(X.size()), wH(X.size()), wQ(X.size());
    for (size_t i = 0; i < size_t(N); ++i) {
        int e = 0;
        double m = std::frexp(double(X[i]), &e);  // |x| = m * 2^e, m in [0.5, 1)
        wE[i] = e - 1;
        wY[i] = 2.0 * X[i];
        wZ[i] = std::min(std::max(std::fabs(m) * 2.0, 1.25), 1.75);
        // The codes by memcpy: the GPU flavours' types are the toolkits' stand-ins.
        const tl::half h(X[i]);
        uint16_t hbits = 0;
        std::memcpy(&hbits, &h, sizeof hbits);
        wH[i] = hbits;
        uint32_t bits = 0;
        std::memcpy(&bits, &X[i], sizeof bits);
        const uint8_t top = uint8_t(bits >> 24);
        tl::fp8_e4m3 code;
        std::memcpy(&code, &top, sizeof top);
        wQ[i] = toDouble(code);
    }
    expectStatus("float_bits status" + at,
                 tl_kernels::float_bits(X.data(), E.data(), Y.data(), Z.data(), H.data(), Q.data(), N), 0);
    check("reinterpret(u32, x): the exponent field" + at, E, wE, 0, 0);
    check("reinterpret(f32, bits + (1 << 23)) = 2x" + at, Y, wY, 0, 0);
    check("clamp(reinterpret(f32, mantissa | 1.0's exponent), 1.25, 1.75)" + at, Z, wZ, 0, 0);
    check("reinterpret(u16, f16(x))" + at, H, wH, 0, 0);
    check("reinterpret(f8e4m3, top byte)" + at, Q, wQ, 0, 0);
}

// DeepSeek MLA decode (kernels/mla_decode.tl, TileLang's example_mla_decode.py without the
// split): per batch and head, softmax over the sequence of the scores of [Q, Q_pe] against
// [KV, K_pe] scaled by (dim + pe_dim)^-1/2, times KV. `wide`: the mla_decode_wg variant (64
// heads, 64 keys and 256 threads as TileLang launches it, dim 128 and pe_dim 32 to fit every
// target): on sm90 its scores are two warpgroups' wgmma m64n32, the row statistics in their layout.
void mlaDecode(int Bn, int H, int S, bool wide = false) {
    const int D = wide ? 128 : 512, P = wide ? 32 : 64;
    auto Q = random<tl::half>(size_t(Bn) * H * D, 61), Qpe = random<tl::half>(size_t(Bn) * H * P, 62);
    auto KV = random<tl::half>(size_t(Bn) * S * D, 63), Kpe = random<tl::half>(size_t(Bn) * S * P, 64);
    std::vector<tl::half> O(size_t(Bn) * H * D, tl::half(-7.0f));
    std::vector<double> want(O.size()), score(S);
    for (int b = 0; b < Bn; ++b)
        for (int h = 0; h < H; ++h) {
            const size_t q = size_t(b) * H + h;
            double mx = -INFINITY;
            for (int s = 0; s < S; ++s) {
                const size_t k = size_t(b) * S + s;
                double dot = 0;
                for (int d = 0; d < D; ++d) dot += toDouble(Q[q * D + d]) * toDouble(KV[k * D + d]);
                for (int d = 0; d < P; ++d) dot += toDouble(Qpe[q * P + d]) * toDouble(Kpe[k * P + d]);
                score[s] = dot / std::sqrt(double(D + P));
                mx = std::max(mx, score[s]);
            }
            double sum = 0;
            for (int s = 0; s < S; ++s) sum += (score[s] = std::exp(score[s] - mx));
            for (int d = 0; d < D; ++d) {
                double o = 0;
                for (int s = 0; s < S; ++s) o += score[s] * toDouble(KV[(size_t(b) * S + s) * D + d]);
                want[q * D + d] = o / sum;
            }
        }
    std::string name = wide ? "mla_decode_wg" : "mla_decode", at = " " + dims({Bn, H, S});
    expectStatus(name + " status" + at,
                 wide ? tl_mla_decode_wg::mla_decode(Q.data(), Qpe.data(), KV.data(), Kpe.data(), O.data(), Bn, H, S)
                      : tl_kernels::mla_decode(Q.data(), Qpe.data(), KV.data(), Kpe.data(), O.data(), Bn, H, S),
                 0);
    // The probabilities go through f16 (S_shared) before the second gemm, as in the original.
    check(name + at, O, want, 2e-3, 2e-2);
}

// Issue 12, case a: fragment elements read outside parallel loops (tests/run/kernels/block_scalars.tl).
void blockScalars(int M) {
    const int NB = 8, BN = 64, MB = (M + 15) / 16;
    std::string at = " M=" + std::to_string(M);
    {
        auto X = random<float>(size_t(M) * NB * BN, 61);
        auto Scale = random<float>(MB, 62);
        auto bits = random<float>(size_t(MB) * NB, 63, 0.0, 1.0), counts = random<float>(MB, 64, 0.0, NB + 0.99);
        std::vector<int32_t> Mask(bits.size()), Count(MB);
        for (size_t i = 0; i < bits.size(); ++i) Mask[i] = bits[i] < 0.6f ? 1 : 0;
        for (int b = 0; b < MB; ++b) Count[b] = std::min(NB, int(counts[b]));
        Count[0] = NB;  // every tile of the first block
        std::vector<float> Y(size_t(M) * BN, -7.0f);
        std::vector<double> want(Y.size(), 0.0);
        for (int r = 0; r < M; ++r)
            for (int k = 0; k < Count[r / 16]; ++k)
                if (Mask[size_t(r / 16) * NB + k])
                    for (int c = 0; c < BN; ++c)
                        want[size_t(r) * BN + c] +=
                            double(X[size_t(r) * NB * BN + size_t(k) * BN + c]) * Scale[r / 16] + 2.0 * Scale[r / 16];
        expectStatus("masked_tiles status" + at,
                     tl_kernels::masked_tiles(X.data(), Mask.data(), Scale.data(), Count.data(), Y.data(), M, MB), 0);
        check("per-block mask, scale and count read outside parallel loops" + at, Y, want, 1e-4, 1e-5);
    }
    {
        const int N = 300;  // three column tiles of 128, the last partial
        auto X = random<float>(size_t(M) * N, 65, -4.0, 4.0);
        std::vector<float> Y(X.size(), -7.0f);
        std::vector<double> want(X.size());
        for (int r = 0; r < M; ++r) {
            double sum = 0;
            for (int c = 0; c < N; ++c) sum += std::exp2(double(X[size_t(r) * N + c]));
            for (int c = 0; c < N; ++c) want[size_t(r) * N + c] = std::exp2(double(X[size_t(r) * N + c])) / sum;
        }
        expectStatus("online_softmax status" + at, tl_kernels::online_softmax(X.data(), Y.data(), M, N), 0);
        check("online softmax, log-sum-exp in a [1] fragment updated outside parallel loops" + at, Y, want, 1e-5, 1e-4);
    }
    {
        auto X = random<float>(size_t(M) * NB, 66, -0.6, 0.6);
        std::vector<float> Y(M, -7.0f);
        std::vector<double> want(M, 0.0);
        for (int b = 0; b < MB; ++b)
            for (int k = 0; k < NB; ++k) {
                double mx = 0;  // rows past M are zeros in the tile
                for (int r = b * 16; r < b * 16 + 16; ++r) mx = std::max(mx, r < M ? 2.0 * X[size_t(r) * NB + k] : 0.0);
                if (mx > 1.0)
                    for (int r = b * 16; r < std::min(M, b * 16 + 16); ++r) want[r] += 2.0 * X[size_t(r) * NB + k] * (k + 1);
            }
        // Y moves in 4-element vectors on GPUs when M is a multiple of 4.
        expectStatus("active_columns status" + at, tl_kernels::active_columns(X.data(), Y.data(), M), 0);
        check("column maxima spread over threads, read outside parallel loops" + at, Y, want, 1e-5, 1e-5);
    }
}

// Issue 12, case b: int4 weights unpacked from bytes (tests/run/kernels/dequant_int4.tl).
void dequantInt4(int M, int N, int K) {
    std::string at = " " + dims({M, N, K});
    auto A = random<tl::half>(size_t(M) * K, 67);
    auto bytes = random<float>(size_t(N) * K / 2, 68, 0.0, 255.99);
    std::vector<uint8_t> B(bytes.size());
    for (size_t i = 0; i < B.size(); ++i) B[i] = uint8_t(bytes[i]);
    auto Scale = random<tl::half>(N, 69, 0.01, 0.2);
    std::vector<float> C(size_t(M) * N, -7.0f);
    auto weight = [&](int j, int k) {
        int q = (B[size_t(j) * (K / 2) + k / 2] >> ((k % 2) * 4)) & 15;
        return toDouble(tl::half(float(q - 8) * float(Scale[j])));
    };
    auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                       [&](int k, int j) { return weight(j, k); });
    expectStatus("dequant_int4 status" + at, tl_kernels::dequant_int4(A.data(), B.data(), Scale.data(), C.data(), M, K, N), 0);
    check("gemm of int4 weights unpacked two per byte (B_local[i, j / 2])" + at, C, want, 1e-2, 1e-2);
}

// Issue 12, case c: a row of a fragment at a serial loop's index (tests/run/kernels/fragment_rows.tl).
void fragmentRows(int M) {
    std::string at = " M=" + std::to_string(M);
    {
        const int N = 64, T = 4;
        auto X = random<float>(size_t(M) * N, 70);
        std::vector<float> V(size_t(M) * T, -7.0f);
        std::vector<int32_t> I(size_t(M) * T, -7);
        std::vector<double> wv(V.size()), wi(I.size());
        for (int r = 0; r < M; ++r) {
            std::vector<int> order(N);
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(),
                             [&](int a, int b) { return X[size_t(r) * N + a] > X[size_t(r) * N + b]; });
            for (int t = 0; t < T; ++t) {
                wv[size_t(r) * T + t] = X[size_t(r) * N + order[t]];
                wi[size_t(r) * T + t] = order[t];
            }
        }
        expectStatus("topk_rows status" + at, tl_kernels::topk_rows(X.data(), V.data(), I.data(), M), 0);
        check("top-k values written at column k of a fragment" + at, V, wv, 0, 0);
        check("top-k indices written at column k of a fragment" + at, I, wi, 0, 0);
    }
    {
        const int N = 32;
        auto X = random<float>(size_t(M) * N, 71);
        std::vector<float> Y(M, -7.0f);
        std::vector<double> want(M);
        for (int r = 0; r < M; ++r) {
            double acc = 0;
            for (int k = 0; k < N; ++k) acc = acc * 0.5 + X[size_t(r) * N + k];
            want[r] = acc;
        }
        expectStatus("horner_rows status" + at, tl_kernels::horner_rows(X.data(), Y.data(), M), 0);
        check("serial loop over a fragment row inside a loop over rows" + at, Y, want, 1e-5, 1e-5);
    }
}

// Issue 12, case d: row vectors read by loops that want another layout (tests/run/kernels/row_vectors.tl).
void rowVectors(int S) {
    const int D = 128;
    std::string at = " S=" + std::to_string(S);
    {
        auto Q = random<tl::half>(size_t(S) * D, 72), K = random<tl::half>(size_t(S) * D, 73),
             V = random<tl::half>(size_t(S) * D, 74);
        std::vector<tl::half> O(size_t(S) * D, tl::half(-7.0f));
        std::vector<double> want(O.size(), 0.0);
        for (int i = 0; i < S; ++i) {
            std::vector<double> p(S);
            double mx = -INFINITY, sum = 0;
            for (int j = 0; j < S; ++j) {
                double dot = 0;
                for (int d = 0; d < D; ++d) dot += toDouble(Q[size_t(i) * D + d]) * toDouble(K[size_t(j) * D + d]);
                p[j] = dot / std::sqrt(double(D));
                mx = std::max(mx, p[j]);
            }
            for (int j = 0; j < S; ++j) sum += p[j] = std::exp(p[j] - mx);
            for (int j = 0; j < S; ++j)
                for (int d = 0; d < D; ++d) want[size_t(i) * D + d] += p[j] / sum * toDouble(V[size_t(j) * D + d]);
        }
        expectStatus("attention_rows status" + at, tl_kernels::attention_rows(Q.data(), K.data(), V.data(), O.data(), S), 0);
        check("attention, row max and sum read by the loop over the output through shared memory" + at, O, want, 1e-2, 2e-2);
    }
    if (S == 100) {
        auto X = random<float>(64 * 32, 75), W = random<float>(32 * 64, 76), v = random<float>(64, 77);
        std::vector<float> Y(X.size(), -7.0f), Z(W.size(), -7.0f);
        std::vector<double> wy(Y.size()), wz(Z.size());
        for (int i = 0; i < 64; ++i)
            for (int j = 0; j < 32; ++j) wy[size_t(i) * 32 + j] = double(X[size_t(i) * 32 + j]) + v[i];
        for (int i = 0; i < 32; ++i)
            for (int j = 0; j < 64; ++j) wz[size_t(i) * 64 + j] = double(W[size_t(i) * 64 + j]) * v[j];
        expectStatus("rows_and_columns status", tl_kernels::rows_and_columns(X.data(), W.data(), v.data(), Y.data(), Z.data()), 0);
        check("a vector read as rows by one loop", Y, wy, 1e-6, 1e-6);
        check("the same vector read as columns by another loop", Z, wz, 1e-6, 1e-6);
    }
}

// copy between a region and a larger buffer: the region's overlap with the buffer's leading
// corner moves, the rest of the buffer (and of the tensor) keeps its values.
void overlapCopies(int M, int N) {
    const int NS = 40, BN = 64;
    auto A = random<float>(size_t(M) * N, 61);
    std::vector<float> B(A.size(), -7.0f), C(A.size(), -7.0f), D(A.size(), -7.0f), E(A.size(), -7.0f);
    std::vector<double> wb(A.size()), wc(A.size()), wd(A.size()), we(A.size());
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            size_t at = size_t(i) * N + j;
            double a = A[at];
            wb[at] = j < NS ? 2 * a : -7.0;
            wc[at] = j < NS ? a : j < BN ? 5.0 : -7.0;
            wd[at] = j < NS ? a : -7.0;
            we[at] = j < NS ? 2 * a : j < BN ? -2.0 : -7.0;
        }
    std::string at = " " + dims({M, N});
    expectStatus("overlap_copy status" + at,
                 int(tl_kernels::overlap_copy(A.data(), B.data(), C.data(), D.data(), E.data(), M, N)), 0);
    check("overlap_copy fragment part -> global" + at, B, wb, 0, 0);
    check("overlap_copy global -> fragment part" + at, C, wc, 0, 0);
    check("overlap_copy shared part -> global" + at, D, wd, 0, 0);
    check("overlap_copy global -> shared part" + at, E, we, 0, 0);
}

// Split-K (tests/run/kernels/split_k.tl): `let`s between the grid and the pipelined loop give
// each z-block its run of k-tiles (on sm90 the warp-specialised producer needs them too, and
// some runs are empty); the partial products go to slices of C, or are added into C element
// by element with atomic_add. Each slice against its own double reference. Both stores take
// the accumulator's neighbouring columns as one vector (sm90: one vector reduction); `shift`
// places the outputs that many elements into their buffers, where the fast path's vectors
// cannot go: the launchers run the general variants (element stores), and nothing around the
// outputs is written.
void splitKGemms(int M, int N, int K, int shift = 0) {
    std::string at = " " + dims({M, N, K}) + (shift ? " output shifted by " + std::to_string(shift) : "");
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
    // Each output with `shift` sentinels before it and after it.
    auto inside = [&](const std::vector<float>& buffer, size_t n) {
        return std::vector<float>(buffer.begin() + shift, buffer.begin() + shift + std::ptrdiff_t(n));
    };
    auto untouched = [&](const std::string& what, const std::vector<float>& buffer, size_t n, float sentinel) {
        if (!shift) return;
        std::vector<float> around(buffer.begin(), buffer.begin() + shift);
        around.insert(around.end(), buffer.begin() + shift + std::ptrdiff_t(n), buffer.end());
        check(what + " elements around the output untouched" + at, around, std::vector<double>(around.size(), sentinel),
              0, 0);
    };
    const size_t partsSize = splits * size_t(M) * N, sumSize = size_t(M) * N;
    std::vector<float> C(partsSize + 2 * shift, -7.0f);
    expectStatus("gemm_split_parts status" + at,
                 tl_kernels::gemm_split_parts(A.data(), B.data(), C.data() + shift, M, K, N), 0);
    check("split-K partial products, lets before the pipelined loop" + at, inside(C, partsSize), parts, 1e-4, 1e-4);
    untouched("gemm_split_parts", C, partsSize, -7.0f);
    std::vector<float> sum(sumSize + 2 * shift, 0.0f);
    expectStatus("gemm_split_atomic status" + at,
                 tl_kernels::gemm_split_atomic(A.data(), B.data(), sum.data() + shift, M, K, N), 0);
    check("split-K, partials added by element atomic_add" + at, inside(sum, sumSize), range(0, K), 1e-4, 1e-4);
    untouched("gemm_split_atomic", sum, sumSize, 0.0f);
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
    // W's rows move in 16-byte vectors on GPUs when n is a multiple of 8.
    expectStatus("histogram status n=" + std::to_string(n),
                 tl_kernels::histogram(X.data(), W.data(), H.data(), S.data(), n), 0);
    check("atomic_add element i32 (histogram) n=" + std::to_string(n), H, count, 0, 0);
    check("atomic_add element f16 (per-bin sums) n=" + std::to_string(n), S, sum, 0, 0);
}

} // namespace

// Tiles computed as they are stored (tests/run/kernels/fused_stores.tl), the tensors written at
// element offset `shift` from a 64-byte boundary.
void fusedStores(int M, int shift) {
    const int N = 96;
    std::string at = " M=" + std::to_string(M) + " shift=" + std::to_string(shift);
    auto X = random<float>(size_t(M) * N, 81), W = random<float>(N, 82);
    // Over-allocated, then aligned by hand: the offsets are from a known line boundary.
    auto aligned = [](auto& storage, int elements) {
        auto* p = storage.data();
        while (reinterpret_cast<std::uintptr_t>(p) % 64 != 0) ++p;
        return p + elements;
    };
    std::vector<float> Ystore(size_t(M) * N + 64, -7.0f), S(M, -7.0f);
    std::vector<tl::half> Hstore(size_t(M) * N + 64, tl::half(-7.0f));
    float* Y = aligned(Ystore, shift);
    tl::half* H = aligned(Hstore, shift);
    std::vector<double> wantY(size_t(M) * N), wantS(M), wantH(size_t(M) * N);
    for (int i = 0; i < M; ++i) {
        double sum = 0;
        for (int j = 0; j < N; ++j) sum += wantY[size_t(i) * N + j] = double(X[size_t(i) * N + j]) * W[j] + 0.5;
        wantS[i] = sum;
        for (int j = 0; j < N; ++j) wantH[size_t(i) * N + j] = double(X[size_t(i) * N + j]) - float(sum) / N;
    }
    expectStatus("fused_stores status" + at, tl_kernels::fused_stores(X.data(), W.data(), Y, H, S.data(), M), 0);
    check("tile stored as computed, then summed" + at, std::vector<float>(Y, Y + size_t(M) * N), wantY, 1e-6, 1e-6);
    check("row sums of the stored tile" + at, S, wantS, 1e-4, 1e-5);
    check("tile computed into f16 as stored" + at, std::vector<tl::half>(H, H + size_t(M) * N), wantH, 1e-3, 1e-3);
    // Around the tensors nothing was written.
    std::vector<float> before(Ystore.data(), Y), after(Y + size_t(M) * N, Ystore.data() + Ystore.size());
    check("elements around Y untouched" + at, before, std::vector<double>(before.size(), -7.0), 0, 0);
    check("elements after Y untouched" + at, after, std::vector<double>(after.size(), -7.0), 0, 0);

    auto X2 = random<float>(size_t(M) * 64, 83);
    std::vector<float> Zstore(size_t(M) * 192 + 64, -7.0f);
    float* Z = aligned(Zstore, shift);
    std::vector<double> wantZ(size_t(M) * 192);
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < 3; ++k)
            for (int j = 0; j < 64; ++j) wantZ[size_t(i) * 192 + k * 64 + j] = double(X2[size_t(i) * 64 + j]) * (2 << k);
    expectStatus("fused_stores_loop status" + at, tl_kernels::fused_stores_loop(X2.data(), Z, M), 0);
    check("tile computed as stored, read again by the next iteration" + at,
          std::vector<float>(Z, Z + size_t(M) * 192), wantZ, 1e-6, 1e-6);
}

// A layer norm read from X where x would be (read-tiles-in-place), Y at element offset `shift`.
void readInPlace(int M, int shift) {
    const int N = 96;
    std::string at = " M=" + std::to_string(M) + " shift=" + std::to_string(shift);
    auto X = random<float>(size_t(M) * N, 84), W = random<float>(N, 85);
    std::vector<float> Ystore(size_t(M) * N + 64, -7.0f);
    float* Y = Ystore.data();
    while (reinterpret_cast<std::uintptr_t>(Y) % 64 != 0) ++Y;
    Y += shift;
    std::vector<double> want(size_t(M) * N);
    for (int i = 0; i < M; ++i) {
        const float* x = &X[size_t(i) * N];
        double mean = 0, var = 0;
        for (int j = 0; j < N; ++j) mean += x[j];
        mean /= N;
        for (int j = 0; j < N; ++j) var += (x[j] - mean) * (x[j] - mean);
        for (int j = 0; j < N; ++j) want[size_t(i) * N + j] = (x[j] - mean) / std::sqrt(var / N + 1e-5) * W[j];
    }
    expectStatus("read_in_place status" + at, tl_kernels::read_in_place(X.data(), W.data(), Y, M), 0);
    check("layer norm reading X in place of its tile" + at, std::vector<float>(Y, Y + size_t(M) * N), want, 1e-4, 1e-4);
    std::vector<float> after(Y + size_t(M) * N, Ystore.data() + Ystore.size());
    check("elements after Y untouched (read in place)" + at, after, std::vector<double>(after.size(), -7.0), 0, 0);
}

// Issue 48: whole-tile assignments with silu and gelu (tests/run/kernels/whole_tile.tl).
void wholeTiles(int M, int N) {
    std::string at = " " + dims({M, N});
    auto G = random<tl::half>(size_t(M) * N, 81, -4.0, 4.0), U = random<tl::half>(size_t(M) * N, 82, -2.0, 2.0);
    std::vector<tl::half> Y(G.size(), tl::half(-7.0f));
    std::vector<double> wantY(Y.size());
    for (size_t i = 0; i < Y.size(); ++i) {
        double g = toDouble(G[i]);
        wantY[i] = g / (1.0 + std::exp(-g)) * toDouble(U[i]);
    }
    expectStatus("swiglu status" + at, tl_kernels::swiglu(G.data(), U.data(), Y.data(), M, N), 0);
    check("whole tiles: Y = silu(G) * U" + at, Y, wantY, 4e-3, 4e-3);

    auto X = random<tl::half>(size_t(M) * N, 83, -3.0, 3.0);
    auto B = random<float>(size_t(M) * N, 84, -1.0, 1.0);
    std::vector<float> Z(X.size(), -7.0f);
    std::vector<double> wantZ(Z.size());
    for (size_t i = 0; i < Z.size(); ++i) {
        double x = toDouble(X[i]), v = x + B[i];
        wantZ[i] = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))) + 0.5 * x;
    }
    expectStatus("gelu_residual status" + at, tl_kernels::gelu_residual(X.data(), B.data(), Z.data(), M, N), 0);
    check("whole tiles: Z = gelu(X + B) + 0.5 X" + at, Z, wantZ, 1e-5, 1e-5);
}

// argmax / argmin along rows and columns of [16, 96] tiles; values drawn from few levels, so
// that rows hold ties (the first index wins, as in PyTorch).
void argReductions(int M) {
    const int N = 96, blockM = 16, R = (M + blockM - 1) / blockM;
    auto levels = random<int>(size_t(M) * N, 85, 0, 40);
    std::vector<float> X(levels.size());
    for (size_t i = 0; i < X.size(); ++i) X[i] = float(levels[i]) * 0.25f - 5.0f;
    std::vector<int> Imax(M, -7), Imin(M, -7), Jmax(size_t(R) * N, -7);
    std::vector<double> wantMax(M), wantMin(M), wantJ(Jmax.size());
    for (int i = 0; i < M; ++i) {
        const float* row = &X[size_t(i) * N];
        wantMax[i] = double(std::max_element(row, row + N) - row);
        wantMin[i] = double(std::min_element(row, row + N) - row);
    }
    for (int b = 0; b < R; ++b)
        for (int j = 0; j < N; ++j) {
            int best = 0;  // rows past M are not in the tile's values: the copy reads them as 0
            for (int i = 1; i < blockM; ++i) {
                auto at = [&](int r) { return b * blockM + r < M ? X[size_t(b * blockM + r) * N + j] : 0.0f; };
                if (at(i) > at(best)) best = i;
            }
            wantJ[size_t(b) * N + j] = best;
        }
    std::string at = " M=" + std::to_string(M);
    expectStatus("row_argmax status" + at, tl_kernels::row_argmax(X.data(), Imax.data(), Imin.data(), Jmax.data(), M, R), 0);
    check("argmax along rows, first of ties" + at, Imax, wantMax, 0, 0);
    check("argmin along rows, first of ties" + at, Imin, wantMin, 0, 0);
    check("argmax along the tile's columns (dim 0, kept)" + at, Jmax, wantJ, 0, 0);
}

// Issue 48's beginner level: whole-tensor kernels (tests/run/kernels/whole_tensor.tl).
void wholeTensors(int M, int N, int B) {
    std::string at = " " + dims({B, M, N});
    {
        auto X = random<float>(size_t(M) * N, 91, -2.0, 2.0), b = random<float>(size_t(N), 92, -1.0, 1.0);
        std::vector<float> Y(X.size(), -7.0f);
        std::vector<double> want(Y.size());
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) want[size_t(i) * N + j] = std::max(0.0, double(X[size_t(i) * N + j]) * 2.0 + b[j]);
        expectStatus("bias_relu status" + at, tl_kernels::bias_relu(X.data(), b.data(), Y.data(), M, N), 0);
        check("whole tensors: Y = relu(X * 2 + b), b broadcast along rows" + at, Y, want, 1e-6, 1e-6);
    }
    {
        const size_t n = size_t(B) * M * N;
        auto G = random<tl::bfloat16>(n, 93, -4.0, 4.0), U = random<tl::bfloat16>(n, 94, -2.0, 2.0);
        auto r = random<float>(size_t(M), 95, 0.5, 1.5);
        std::vector<tl::bfloat16> Y(n, tl::bfloat16(-7.0f));
        std::vector<double> want(n);
        for (size_t e = 0; e < n; ++e) {
            double g = toDouble(G[e]);
            want[e] = g / (1.0 + std::exp(-g)) * toDouble(U[e]) * r[(e / N) % M];
        }
        expectStatus("swiglu3 status" + at, tl_kernels::swiglu3(G.data(), U.data(), r.data(), Y.data(), B, M, N), 0);
        check("whole tensors: rank 3, a [S, 1] scale broadcast along the last dimension" + at, Y, want, 1e-2, 1e-2);
    }
    {
        const float alpha = 0.75f;
        auto x = random<tl::half>(size_t(N), 96, -2.0, 2.0), y = random<tl::half>(size_t(N), 97, -2.0, 2.0);
        std::vector<tl::half> y2 = y;
        std::vector<float> z(size_t(N), -7.0f);
        std::vector<double> wantY(N), wantZ(N);
        for (int j = 0; j < N; ++j) {
            double t = double(alpha) * toDouble(x[j]);
            double yj = toDouble(tl::half(float(toDouble(y[j]) + t)));  // y is stored as f16 first
            wantY[j] = yj;
            wantZ[j] = 0.5 * yj * (1.0 + std::erf(yj / std::sqrt(2.0))) - t;
        }
        expectStatus("axpy2 status" + at, tl_kernels::axpy2(alpha, x.data(), y2.data(), z.data(), N), 0);
        check("whole tensors: y = y + alpha x in f16" + at, y2, wantY, 2e-3, 2e-3);
        check("whole tensors: z reads the new y" + at, z, wantZ, 1e-5, 1e-5);
    }
}

// Y = relu(X @ W + b) written on whole tensors: a GEMM and its fused epilogue.
void wholeTensorGemm(int M, int N, int K) {
    auto X = random<tl::half>(size_t(M) * K, 98), W = random<tl::half>(size_t(K) * N, 99), b = random<tl::half>(size_t(N), 100);
    std::vector<tl::half> Y(size_t(M) * N, tl::half(-7.0f));
    std::vector<double> want(Y.size());
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double s = toDouble(b[j]);
            for (int k = 0; k < K; ++k) s += toDouble(X[size_t(i) * K + k]) * toDouble(W[size_t(k) * N + j]);
            want[size_t(i) * N + j] = std::max(s, 0.0);
        }
    std::string at = " " + dims({M, N, K});
    expectStatus("mlp_up status" + at, tl_kernels::mlp_up(X.data(), W.data(), b.data(), Y.data(), M, K, N), 0);
    check("whole tensors: Y = relu(X @ W + b)" + at, Y, want, 2e-2, 2e-2);
}

// layernorm, rmsnorm and softmax as whole-tensor kernels, rows of any length.
void wholeTensorRows(int M, int N) {
    std::string at = " " + dims({M, N});
    auto X = random<float>(size_t(M) * N, 101, -3.0, 3.0);
    std::vector<tl::bfloat16> Xb(X.size());
    std::vector<tl::half> Xh(X.size());
    for (size_t e = 0; e < X.size(); ++e) {
        Xb[e] = tl::bfloat16(X[e]);
        Xh[e] = tl::half(X[e]);
    }
    auto g = random<float>(size_t(N), 102, 0.5, 1.5), b = random<float>(size_t(N), 103, -0.5, 0.5);
    std::vector<tl::bfloat16> gb(N), bb(N), Yb(X.size(), tl::bfloat16(-7.0f));
    std::vector<tl::half> gh(N), Yh(X.size(), tl::half(-7.0f));
    for (int j = 0; j < N; ++j) {
        gb[j] = tl::bfloat16(g[j]);
        bb[j] = tl::bfloat16(b[j]);
        gh[j] = tl::half(g[j]);
    }
    std::vector<float> Ys(X.size(), -7.0f);
    std::vector<double> wantLn(X.size()), wantRms(X.size()), wantSm(X.size());
    for (int i = 0; i < M; ++i) {
        double sum = 0, sq = 0, sqh = 0, mx = -INFINITY, den = 0;
        for (int j = 0; j < N; ++j) {
            double x = toDouble(Xb[size_t(i) * N + j]), xh = toDouble(Xh[size_t(i) * N + j]);
            sum += x;
            sq += x * x;
            sqh += xh * xh;
            mx = std::max(mx, double(X[size_t(i) * N + j]));
        }
        for (int j = 0; j < N; ++j) den += std::exp(double(X[size_t(i) * N + j]) - mx);
        double mean = sum / N, rstd = 1.0 / std::sqrt(sq / N - mean * mean + 1e-5), scale = 1.0 / std::sqrt(sqh / N + 1e-6);
        for (int j = 0; j < N; ++j) {
            size_t e = size_t(i) * N + j;
            wantLn[e] = (toDouble(Xb[e]) - mean) * rstd * toDouble(gb[j]) + toDouble(bb[j]);
            wantRms[e] = toDouble(Xh[e]) * scale * toDouble(gh[j]);
            wantSm[e] = std::exp(double(X[e]) - mx) / den;
        }
    }
    expectStatus("norm status" + at, tl_kernels::norm(Xb.data(), gb.data(), bb.data(), Yb.data(), M, N), 0);
    check("whole tensors: Y = layernorm(X, g, b)" + at, Yb, wantLn, 3e-2, 2e-2);
    expectStatus("rms status" + at, tl_kernels::rms(Xh.data(), gh.data(), Yh.data(), M, N), 0);
    check("whole tensors: Y = rmsnorm(X, g)" + at, Yh, wantRms, 4e-3, 4e-3);
    expectStatus("row_softmax status" + at, tl_kernels::row_softmax(X.data(), Ys.data(), M, N), 0);
    check("whole tensors: Y = softmax(X), columns past N masked" + at, Ys, wantSm, 1e-6, 1e-5);
    {
        // Row 0 -inf in its first half (whole chunks of it at N = 1000): the online maximum is -inf
        // for a while, and exp(-inf - -inf) must not reach the sum.
        std::vector<float> Xi(X);
        std::vector<double> wantI(wantSm);
        double mx = -INFINITY, den = 0;
        for (int j = 0; j < N / 2; ++j) Xi[j] = -INFINITY;
        for (int j = 0; j < N; ++j) mx = std::max(mx, double(Xi[j]));
        for (int j = 0; j < N; ++j) den += std::exp(double(Xi[j]) - mx);
        for (int j = 0; j < N; ++j) wantI[j] = std::exp(double(Xi[j]) - mx) / den;
        expectStatus("row_softmax (-inf) status" + at, tl_kernels::row_softmax(Xi.data(), Ys.data(), M, N), 0);
        check("whole tensors: Y = softmax(X), a row -inf in its first half" + at, Ys, wantI, 1e-6, 1e-5);
    }
    {
        // Layernorm of f32 rows at 1000 +- 3 (double reference from the same f32 inputs).
        std::vector<float> Xo(X.size()), Yo(X.size(), -7.0f);
        std::vector<double> want(X.size());
        for (size_t e = 0; e < X.size(); ++e) Xo[e] = 1000.0f + X[e];
        for (int i = 0; i < M; ++i) {
            double mean = 0, var = 0;
            for (int j = 0; j < N; ++j) mean += double(Xo[size_t(i) * N + j]) / N;
            for (int j = 0; j < N; ++j) var += (Xo[size_t(i) * N + j] - mean) * (Xo[size_t(i) * N + j] - mean) / N;
            for (int j = 0; j < N; ++j)
                want[size_t(i) * N + j] = (Xo[size_t(i) * N + j] - mean) / std::sqrt(var + 1e-5) * g[j] + b[j];
        }
        expectStatus("norm_f32 status" + at, tl_kernels::norm_f32(Xo.data(), g.data(), b.data(), Yo.data(), M, N), 0);
        check("whole tensors: Y = layernorm(X, g, b), f32 rows at 1000 +- 3" + at, Yo, want, 2e-3, 2e-3);
    }
    if (N != 1000) return;
    // The row length known when compiling: one read of each row, kept on chip.
    std::fill(Yb.begin(), Yb.end(), tl::bfloat16(-7.0f));
    std::fill(Yh.begin(), Yh.end(), tl::half(-7.0f));
    std::fill(Ys.begin(), Ys.end(), -7.0f);
    expectStatus("norm_1000 status" + at, tl_kernels::norm_1000(Xb.data(), gb.data(), bb.data(), Yb.data(), M), 0);
    check("whole tensors, row on chip: Y = layernorm(X, g, b)" + at, Yb, wantLn, 3e-2, 2e-2);
    expectStatus("rms_1000 status" + at, tl_kernels::rms_1000(Xh.data(), gh.data(), Yh.data(), M), 0);
    check("whole tensors, row on chip: Y = rmsnorm(X, g)" + at, Yh, wantRms, 4e-3, 4e-3);
    expectStatus("row_softmax_1000 status" + at, tl_kernels::row_softmax_1000(X.data(), Ys.data(), M), 0);
    check("whole tensors, row on chip: Y = softmax(X)" + at, Ys, wantSm, 1e-6, 1e-5);
    // Mixed dtypes: softmax of the f16 input into f32, rmsnorm of the f32 input into bf16.
    std::vector<double> wantSmH(X.size()), wantRmsF(X.size());
    for (int i = 0; i < M; ++i) {
        double mx = -INFINITY, den = 0, sq = 0;
        for (int j = 0; j < N; ++j) {
            mx = std::max(mx, toDouble(Xh[size_t(i) * N + j]));
            sq += double(X[size_t(i) * N + j]) * X[size_t(i) * N + j];
        }
        for (int j = 0; j < N; ++j) den += std::exp(toDouble(Xh[size_t(i) * N + j]) - mx);
        for (int j = 0; j < N; ++j) {
            size_t e = size_t(i) * N + j;
            wantSmH[e] = std::exp(toDouble(Xh[e]) - mx) / den;
            wantRmsF[e] = X[e] / std::sqrt(sq / N + 1e-6) * g[j];
        }
    }
    std::fill(Ys.begin(), Ys.end(), -7.0f);
    std::fill(Yb.begin(), Yb.end(), tl::bfloat16(-7.0f));
    expectStatus("softmax_f16_f32_1000 status" + at, tl_kernels::softmax_f16_f32_1000(Xh.data(), Ys.data(), M), 0);
    check("whole tensors, row on chip: Y: f32 = softmax(X: f16)" + at, Ys, wantSmH, 1e-6, 1e-5);
    expectStatus("rms_f32_bf16_1000 status" + at, tl_kernels::rms_f32_bf16_1000(X.data(), g.data(), Yb.data(), M), 0);
    check("whole tensors, row on chip: Y: bf16 = rmsnorm(X: f32, g)" + at, Yb, wantRmsF, 2e-2, 1e-2);
}

// O = softmax(Q K^T / sqrt(D)) V per (batch, head) written on whole tensors, causal and not.
void wholeTensorAttention(int B, int S, int H) {
    const int D = 64;
    const size_t n = size_t(B) * S * H * D;
    auto Q = random<tl::half>(n, 104), K = random<tl::half>(n, 105), V = random<tl::half>(n, 106);
    auto at4 = [&](int b, int s, int h, int d) { return ((size_t(b) * S + s) * H + h) * D + d; };
    for (bool causal : {false, true}) {
        std::vector<tl::half> O(n, tl::half(-7.0f));
        std::vector<double> want(n, 0.0);
        for (int b = 0; b < B; ++b)
            for (int h = 0; h < H; ++h)
                for (int i = 0; i < S; ++i) {
                    const int keys = causal ? i + 1 : S;
                    std::vector<double> p(keys);
                    double mx = -INFINITY, sum = 0;
                    for (int j = 0; j < keys; ++j) {
                        double dot = 0;
                        for (int d = 0; d < D; ++d) dot += toDouble(Q[at4(b, i, h, d)]) * toDouble(K[at4(b, j, h, d)]);
                        p[j] = dot / std::sqrt(double(D));
                        mx = std::max(mx, p[j]);
                    }
                    for (int j = 0; j < keys; ++j) sum += p[j] = std::exp(p[j] - mx);
                    for (int j = 0; j < keys; ++j)
                        for (int d = 0; d < D; ++d) want[at4(b, i, h, d)] += p[j] / sum * toDouble(V[at4(b, j, h, d)]);
                }
        std::string at = " " + dims({B, S, H}) + (causal ? " causal" : "");
        int status = causal ? tl_kernels::attention_causal(Q.data(), K.data(), V.data(), O.data(), B, S, H)
                            : tl_kernels::attention(Q.data(), K.data(), V.data(), O.data(), B, S, H);
        expectStatus("attention status" + at, status, 0);
        check("whole tensors: O = softmax(Q @ transpose(K) / sqrt(D)) @ V" + at, O, want, 1e-2, 2e-2);
    }
}

int main() {
    // Outputs at element offsets from a 64-byte line (views with offsets): on GPUs the general
    // variants take those off the 16-byte grid.
    for (int shift : kGpu ? std::vector<int>{0, 1} : std::vector<int>{0, 1, 7, 15}) {
        fusedStores(16, shift);
        fusedStores(11, shift);  // a partial last row block
        readInPlace(16, shift);
        readInPlace(11, shift);
    }
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
    // 72 and 88 (5 and 6 k-tiles): every remainder of the unrolled loops' groups of 2, 3 and 4.
    for (int K : {0, 8, 16, 40, 56, 72, 88, 200}) pipelinedGemms(72, 88, K);
    pipelinedGemms(128, 64, 64);
    // 33 k-tiles of 16 (the last partial) over 4 versions: each tile starts at another version
    // and phase; 1 and 0 k-tiles: tiles that load nothing, or one k-tile each.
    splitKGemms();
    persistentGemms(200, 200, 520);
    persistentGemms(72, 200, 16);
    persistentGemms(72, 136, 0);
    // Clusters of 2: 3 blocks along the cluster's dimension (the launch pads a fourth that stores
    // nothing), 13 k-tiles of 16 (the last partial); 4 blocks, no padding; one block and its pad.
    clusterGemmX(72, 136, 200);
    clusterGemmX(130, 200, 40);
    clusterGemmX(72, 136, 0);  // no k-tile: the blocks only meet at the cluster barriers
    clusterGemmM(136, 200, 200);  // 7 k-tiles of 32 two to a wgmma group: a short last group
    clusterGemmM(64, 128, 64);
    mixedFp8Gemms(64, 128, 128);
    mixedFp8Gemms(72, 136, 208);  // partial tiles in M and N, the last K tile partial
    // 33 k-tiles of 16 (the last partial): many rounds of each stage's barriers, where sm90's
    // wgmma groups left in flight would read a stage released too early.
    pipelinedGemms(128, 64, 520);
    stagedNtGemm(72, 200, 40);  // partial tiles in both directions, 3 iterations (the last partial)
    stagedNtGemm(128, 256, 64);
    offsetInputs();
    whileLoops(1000, 136, 72, 40);
    whileLoops(64, 64, 64, 16);
    // 5 k tiles over 2 splits (3 + 2, the last partial), 13 over 3 (5 + 5 + 3), 1 over 3 (the last
    // two empty: stop below start), none.
    pipelinedRanges(72, 88, 72, 2);
    pipelinedRanges(136, 72, 200, 3);
    pipelinedRanges(64, 64, 16, 3);
    pipelinedRanges(64, 64, 0, 2);
    floatBits(1000);
    floatBits(128);
    // 150 keys: four blocks of 32 and a partial fifth; 20 heads: a partial second block of 16.
    mlaDecode(2, 16, 150);
    mlaDecode(1, 20, 33);
    // 150 keys: two blocks of 64 and a partial third; 70 heads: a partial second block of 64.
    mlaDecode(1, 70, 150, true);
    // 150 keys: two blocks of 64 and a partial third (Vt's rows of 150 bytes: the general
    // variant on GPUs); 128: whole blocks, TMA rows.
    flashAttentionFp8(1, 150, 2);
    flashAttentionFp8(2, 128, 1);
    blockScalars(16);
    blockScalars(45);  // a partial last row block
    blockScalars(44);  // the same, with rows that GPUs can store in vectors
    dequantInt4(72, 88, 160);  // partial tiles in M and N, the last K tile partial
    dequantInt4(64, 64, 64);
    fragmentRows(16);
    fragmentRows(45);
    rowVectors(100);  // a partial last tile of queries and keys
    rowVectors(64);
    overlapCopies(100, 64);  // a partial row tile
    overlapCopies(64, 72);   // columns past the tile stay untouched
    multiGrid(150, 136, 200);  // partial tiles in M, N and K; 7 k-tiles of 32
    multiGrid(64, 64, 32);
    // Split-K: runs of 1 (K = 40: 3 tiles), empty runs (K = 8, 16), partial runs and tiles (200).
    for (int K : {8, 16, 40, 200}) splitKGemms(72, 88, K);
    splitKGemms(128, 64, 520);
    splitKGemms(72, 88, 40, 1);
    histogram(1000);
    histogram(1003);
    wholeTiles(64, 128);
    wholeTiles(45, 70);  // partial tiles in both directions, rows no GPU vector covers
    argReductions(64);
    argReductions(45);  // a partial last row block
    wholeTensors(64, 128, 2);
    wholeTensors(45, 70, 3);  // partial tiles, rows no GPU vector covers
    wholeTensorGemm(128, 128, 128);
    wholeTensorGemm(72, 70, 100);  // partial tiles in M and N, K no tile divides, rows off the 16-byte grid
    wholeTensorRows(64, 256);
    wholeTensorRows(45, 1000);  // rows longer than one chunk, a partial last chunk
    wholeTensorRows(5, 1537);   // a partial row block, a last chunk of one column at 256- and 512-column chunks
    wholeTensorAttention(1, 64, 2);
    wholeTensorAttention(2, 100, 1);  // a partial last tile of queries and keys
    wholeTensorForms();
    wholeTensorBatched();
    return summary();
}

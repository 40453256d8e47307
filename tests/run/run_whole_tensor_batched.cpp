// Run layer: the beginner level's batched `@` and `@` inside reductions
// (tests/run/kernels/whole_tensor_batched.tl), and the same kernels compiled again from their
// --emit=tile-source output (whole_tensor_batched_ts, launchers in tl_ts), against references in
// double at sizes no tile divides. Called from run_primitives.cpp.
#include "harness.h"

#include "whole_tensor_batched.h"
#include "whole_tensor_batched_ts.h"

#include <algorithm>
#include <cmath>

using namespace harness;

namespace {

// The launchers of one compilation of whole_tensor_batched.tl: the beginner source's, or its
// tile source's (forwarders: the GPU launchers' trailing stream argument has a default).
#define TLC_WT_LAUNCHERS(NS)                                                                                      \
    template <typename... A> static int bmm_bias(A... a) { return NS::bmm_bias(a...); }                         \
    template <typename... A> static int bmm_shared_w(A... a) { return NS::bmm_shared_w(a...); }                 \
    template <typename... A> static int bmm_shared_w_bias(A... a) { return NS::bmm_shared_w_bias(a...); }       \
    template <typename... A> static int bmm_bcast_nt(A... a) { return NS::bmm_bcast_nt(a...); }                 \
    template <typename... A> static int gemm_row_sum(A... a) { return NS::gemm_row_sum(a...); }                 \
    template <typename... A> static int bmm_row_max(A... a) { return NS::bmm_row_max(a...); }                   \
    template <typename... A> static int bmm_lse(A... a) { return NS::bmm_lse(a...); }                           \
    template <typename... A> static int gemm_row_max(A... a) { return NS::gemm_row_max(a...); }                 \
    template <typename... A> static int gemm_row_range(A... a) { return NS::gemm_row_range(a...); }             \
    template <typename... A> static int gemm_center(A... a) { return NS::gemm_center(a...); }                   \
    template <typename... A> static int rms_proj(A... a) { return NS::rms_proj(a...); }                         \
    template <typename... A> static int col_scale(A... a) { return NS::col_scale(a...); }
struct Beginner {
    static constexpr const char* how = "";
    TLC_WT_LAUNCHERS(tl_kernels)
};
struct TileSource {
    static constexpr const char* how = " (its tile source)";
    TLC_WT_LAUNCHERS(tl_ts)
};
#undef TLC_WT_LAUNCHERS

std::string sizesText(std::initializer_list<int> d) {
    std::string s = " ";
    for (int v : d) s += (s.size() > 1 ? "x" : "") + std::to_string(v);
    return s;
}

template <typename T> std::vector<double> asDouble(const std::vector<T>& v) {
    std::vector<double> out(v.size());
    for (size_t e = 0; e < v.size(); ++e) out[e] = toDouble(v[e]);
    return out;
}

// [Bx, M, K] @ [Bw, K, N] per batch index b (a batch dimension of 1 broadcast), each operand
// read through its element function.
template <typename FA, typename FB> std::vector<double> batchedProduct(int B, int M, int N, int K, FA a, FB w) {
    std::vector<double> out(size_t(B) * M * N, 0.0);
    for (int b = 0; b < B; ++b)
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                double acc = 0;
                for (int k = 0; k < K; ++k) acc += a(b, i, k) * w(b, k, j);
                out[(size_t(b) * M + i) * N + j] = acc;
            }
    return out;
}

template <typename L> void batched(int B, int M, int N, int K) {
    const std::string at = sizesText({B, M, N, K}) + L::how;
    // Y = A @ W + b, both batched.
    auto A = random<tl::half>(size_t(B) * M * K, 301), W = random<tl::half>(size_t(B) * K * N, 302);
    auto bias = random<float>(size_t(N), 303);
    auto Ad = asDouble(A), Wd = asDouble(W);
    auto want = batchedProduct(B, M, N, K, [&](int b, int i, int k) { return Ad[(size_t(b) * M + i) * K + k]; },
                               [&](int b, int k, int j) { return Wd[(size_t(b) * K + k) * N + j]; });
    for (size_t e = 0; e < want.size(); ++e) want[e] += bias[e % N];
    std::vector<float> Y(want.size(), -7.0f);
    expectStatus("bmm_bias status" + at, L::bmm_bias(A.data(), W.data(), bias.data(), Y.data(), B, M, K, N), 0);
    check("whole tensors: Y [B, M, N] = A [B, M, K] @ W [B, K, N] + b" + at, Y, want, 1e-3, 1e-3);

    // Y = relu(X @ W * s), W shared by the batch, s per batch index and row, bf16.
    auto X = random<tl::bfloat16>(size_t(B) * M * K, 304), V = random<tl::bfloat16>(size_t(K) * N, 305);
    auto s = random<float>(size_t(B) * M, 306, 0.5, 2.0);
    auto Xd = asDouble(X), Vd = asDouble(V);
    auto wantR = batchedProduct(B, M, N, K, [&](int b, int i, int k) { return Xd[(size_t(b) * M + i) * K + k]; },
                                [&](int, int k, int j) { return Vd[size_t(k) * N + j]; });
    for (size_t e = 0; e < wantR.size(); ++e) wantR[e] = std::max(wantR[e] * s[e / N], 0.0);
    std::vector<tl::bfloat16> Yb(wantR.size(), tl::bfloat16(-7.0f));
    expectStatus("bmm_shared_w status" + at, L::bmm_shared_w(X.data(), V.data(), s.data(), Yb.data(), B, M, K, N), 0);
    check("whole tensors: Y = relu(X [B, M, K] @ W [K, N] * s [B, M, 1]), bf16, rows folded" + at, Yb, wantR, 2e-2, 2e-2);
    {
        // Y = X @ W + p, p [B, 1, N] a bias per batch index: not folded.
        auto p = random<float>(size_t(B) * N, 309);
        auto wantP = batchedProduct(B, M, N, K, [&](int b, int i, int k) { return Xd[(size_t(b) * M + i) * K + k]; },
                                    [&](int, int k, int j) { return Vd[size_t(k) * N + j]; });
        for (size_t e = 0; e < wantP.size(); ++e) wantP[e] += p[e / (size_t(M) * N) * N + e % N];
        std::vector<float> Yp(wantP.size(), -7.0f);
        expectStatus("bmm_shared_w_bias status" + at, L::bmm_shared_w_bias(X.data(), V.data(), p.data(), Yp.data(), B, M, K, N), 0);
        check("whole tensors: Y = X [B, M, K] @ W [K, N] + p [B, 1, N]" + at, Yp, wantP, 1e-3, 1e-3);
    }

    // Y = Q [1, M, K] @ transpose(Kt [B, N, K]) * 0.125: Q broadcast over the batch.
    auto Q = random<tl::half>(size_t(M) * K, 307), Kt = random<tl::half>(size_t(B) * N * K, 308);
    auto Qd = asDouble(Q), Ktd = asDouble(Kt);
    auto wantQ = batchedProduct(B, M, N, K, [&](int, int i, int k) { return Qd[size_t(i) * K + k]; },
                                [&](int b, int k, int j) { return Ktd[(size_t(b) * N + j) * K + k]; });
    for (auto& v : wantQ) v *= 0.125;
    std::vector<float> Yq(wantQ.size(), -7.0f);
    expectStatus("bmm_bcast_nt status" + at, L::bmm_bcast_nt(Q.data(), Kt.data(), Yq.data(), M, K, B, N), 0);
    check("whole tensors: Y = Q [1, M, K] @ transpose(Kt [B, N, K]) * 0.125" + at, Yq, wantQ, 1e-3, 1e-3);
}

template <typename L> void reducedProducts(int M, int N, int K) {
    const std::string at = sizesText({M, N, K}) + L::how;
    auto X = random<tl::half>(size_t(M) * K, 311), W = random<tl::half>(size_t(K) * N, 312);
    auto b = random<tl::half>(size_t(N), 313);
    auto Xd = asDouble(X), Wd = asDouble(W), bd = asDouble(b);
    auto P = matmul(M, N, K, [&](int i, int k) { return Xd[size_t(i) * K + k]; },
                    [&](int k, int j) { return Wd[size_t(k) * N + j]; });
    std::vector<double> rowSum(size_t(M), 0.0), rowMax(size_t(M), -INFINITY), rowMean(size_t(M), 0.0);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            rowSum[i] += P[size_t(i) * N + j];
            rowMax[i] = std::max(rowMax[i], std::max(P[size_t(i) * N + j] + bd[j], 0.0));
            rowMean[i] += P[size_t(i) * N + j] / N;
        }
    std::vector<float> y(size_t(M), -7.0f), ym(size_t(M), -7.0f);
    expectStatus("gemm_row_sum status" + at, L::gemm_row_sum(X.data(), W.data(), y.data(), M, K, N), 0);
    check("whole tensors: y [M] = sum(X @ W, dim = 1)" + at, y, rowSum, 1e-3, 1e-4);
    expectStatus("gemm_row_max status" + at, L::gemm_row_max(X.data(), W.data(), b.data(), ym.data(), M, K, N), 0);
    check("whole tensors: y [M, 1] = max(relu(X @ W + b), dim = 1)" + at, ym, rowMax, 1e-3, 1e-3);

    // r = max(X @ transpose(Wt), dim = 1) - mean(X @ transpose(Wt), dim = 1), bf16 operands.
    std::vector<tl::bfloat16> Xb(X.size()), Wt(W.size());
    for (size_t e = 0; e < X.size(); ++e) Xb[e] = tl::bfloat16(float(X[e]));
    for (int k = 0; k < K; ++k)
        for (int j = 0; j < N; ++j) Wt[size_t(j) * K + k] = tl::bfloat16(float(W[size_t(k) * N + j]));
    auto Xbd = asDouble(Xb), Wtd = asDouble(Wt);
    auto Pb = matmul(M, N, K, [&](int i, int k) { return Xbd[size_t(i) * K + k]; },
                     [&](int k, int j) { return Wtd[size_t(j) * K + k]; });
    std::vector<double> range(static_cast<size_t>(M));
    for (int i = 0; i < M; ++i) {
        double mx = -INFINITY, mean = 0;
        for (int j = 0; j < N; ++j) {
            mx = std::max(mx, Pb[size_t(i) * N + j]);
            mean += Pb[size_t(i) * N + j] / N;
        }
        range[i] = mx - mean;
    }
    std::vector<float> r(size_t(M), -7.0f);
    expectStatus("gemm_row_range status" + at, L::gemm_row_range(Xb.data(), Wt.data(), r.data(), M, K, N), 0);
    check("whole tensors: r = max(X @ transpose(W), dim = 1) - mean(X @ transpose(W), dim = 1)" + at, r, range, 1e-3,
          1e-3);

    // Z = E - mean(X @ W, dim = 1): the product's row mean broadcast back over E.
    auto E = random<float>(size_t(M) * N, 314);
    std::vector<double> wantZ(E.size());
    for (size_t e = 0; e < E.size(); ++e) wantZ[e] = E[e] - rowMean[e / N];
    std::vector<float> Z(E.size(), -7.0f);
    expectStatus("gemm_center status" + at, L::gemm_center(X.data(), W.data(), E.data(), Z.data(), M, K, N), 0);
    check("whole tensors: Z = E - mean(X @ W, dim = 1)" + at, Z, wantZ, 1e-4, 1e-4);
}

// Batched products reduced over their last dimension: max(X [B, M, K] @ W [K, N], dim = 2) and
// the logsumexp of Q [B, M, K] @ transpose(Kt [B, N, K]) per batch index and row.
template <typename L> void batchedReductions(int B, int M, int N, int K) {
    const std::string at = sizesText({B, M, N, K}) + L::how;
    auto X = random<tl::half>(size_t(B) * M * K, 331), W = random<tl::half>(size_t(K) * N, 332);
    auto Kt = random<tl::half>(size_t(B) * N * K, 333);
    auto Xd = asDouble(X), Wd = asDouble(W), Ktd = asDouble(Kt);
    auto P = batchedProduct(B, M, N, K, [&](int b, int i, int k) { return Xd[(size_t(b) * M + i) * K + k]; },
                            [&](int, int k, int j) { return Wd[size_t(k) * N + j]; });
    auto S = batchedProduct(B, M, N, K, [&](int b, int i, int k) { return Xd[(size_t(b) * M + i) * K + k]; },
                            [&](int b, int k, int j) { return Ktd[(size_t(b) * N + j) * K + k]; });
    std::vector<double> wantMax(size_t(B) * M, -INFINITY), wantLse(size_t(B) * M);
    for (size_t row = 0; row < wantMax.size(); ++row) {
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < N; ++j) {
            wantMax[row] = std::max(wantMax[row], P[row * N + j]);
            mx = std::max(mx, S[row * N + j]);
        }
        for (int j = 0; j < N; ++j) sum += std::exp(S[row * N + j] - mx);
        wantLse[row] = mx + std::log(sum);
    }
    std::vector<float> y(wantMax.size(), -7.0f), l(wantLse.size(), -7.0f);
    expectStatus("bmm_row_max status" + at, L::bmm_row_max(X.data(), W.data(), y.data(), B, M, K, N), 0);
    check("whole tensors: y [B, M] = max(X [B, M, K] @ W [K, N], dim = 2)" + at, y, wantMax, 1e-3, 1e-4);
    expectStatus("bmm_lse status" + at, L::bmm_lse(X.data(), Kt.data(), l.data(), B, M, K, N), 0);
    check("whole tensors: y [B, M, 1] = log(sum(exp(Q [B, M, K] @ transpose(Kt [B, N, K])), dim = -1))" + at, l,
          wantLse, 1e-3, 1e-4);
}

// Statistics of the product's rows or columns read by its epilogue.
template <typename L> void statistics(int M, int N, int K) {
    const std::string at = sizesText({M, N, K}) + L::how;
    auto X = random<tl::half>(size_t(M) * K, 321, -2.0, 2.0), W = random<tl::half>(size_t(K) * N, 322);
    auto g = random<float>(size_t(N), 323);
    auto Xd = asDouble(X), Wd = asDouble(W);
    auto P = matmul(M, N, K, [&](int i, int k) { return Xd[size_t(i) * K + k]; },
                    [&](int k, int j) { return Wd[size_t(k) * N + j]; });
    std::vector<double> wantY(P.size()), wantS(P.size());
    for (int i = 0; i < M; ++i) {
        double ms = 0;
        for (int k = 0; k < K; ++k) ms += Xd[size_t(i) * K + k] * Xd[size_t(i) * K + k] / K;
        for (int j = 0; j < N; ++j) wantY[size_t(i) * N + j] = P[size_t(i) * N + j] / std::sqrt(ms + 1e-6);
    }
    for (int j = 0; j < N; ++j) {
        double ss = 0;
        for (int k = 0; k < K; ++k) ss += Wd[size_t(k) * N + j] * Wd[size_t(k) * N + j];
        for (int i = 0; i < M; ++i) wantS[size_t(i) * N + j] = P[size_t(i) * N + j] / std::sqrt(ss + 1.0) + g[j];
    }
    std::vector<tl::half> Y(P.size(), tl::half(-7.0f));
    expectStatus("rms_proj status" + at, L::rms_proj(X.data(), W.data(), Y.data(), M, K, N), 0);
    check("whole tensors: Y = X @ W * rsqrt(mean(X * X, dim = 1) + 1e-6), f16" + at, Y, wantY, 1e-2, 1e-2);
    std::vector<float> S(P.size(), -7.0f);
    expectStatus("col_scale status" + at, L::col_scale(X.data(), W.data(), g.data(), S.data(), M, K, N), 0);
    check("whole tensors: Y = X @ W / sqrt(sum(W * W, dim = 0) + 1) + g" + at, S, wantS, 1e-4, 1e-4);
}

template <typename L> void all() {
    statistics<L>(45, 70, 100);  // partial tiles, K in several chunks of block_R, the last partial
    statistics<L>(64, 128, 32);
    batched<L>(3, 45, 70, 100);  // partial tiles in M and N, K no block_K divides
    batched<L>(1, 64, 64, 32);
    batched<L>(7, 5, 40, 24);  // small M: folded rows B * M = 35, a partial tile across batch indices
    reducedProducts<L>(45, 300, 70);  // rows of several column chunks, the last partial
    reducedProducts<L>(64, 64, 64);
    batchedReductions<L>(2, 45, 300, 40);  // partial row blocks, rows of several column chunks
}

} // namespace

void wholeTensorBatched() {
    all<Beginner>();
    all<TileSource>();
}

// Run layer: the beginner level's reductions, where, transposes, permutations, slices, GEMMs of
// a transposed operand and grouped-query attention (tests/run/kernels/whole_tensor_forms.tl),
// against references in double, at sizes no tile divides. Called from run_primitives.cpp.
#include "harness.h"

#include "whole_tensor_forms.h"

#include <algorithm>
#include <cmath>

using namespace harness;

namespace {

std::string wtAt(std::initializer_list<int> d) {
    std::string s = " ";
    for (int v : d) s += (s.size() > 1 ? "x" : "") + std::to_string(v);
    return s;
}

void wtReductions(int M, int N) {
    const std::string at = wtAt({M, N});
    auto X = random<float>(size_t(M) * N, 201, -3.0, 3.0);
    std::vector<tl::half> Xh(X.size());
    for (size_t e = 0; e < X.size(); ++e) Xh[e] = tl::half(X[e]);
    {
        std::vector<float> y(size_t(M), -7.0f);
        std::vector<double> want(size_t(M), 0.0);
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) want[i] += toDouble(Xh[size_t(i) * N + j]);
        expectStatus("row_sum status" + at, tl_kernels::row_sum(Xh.data(), y.data(), M, N), 0);
        check("whole tensors: y = sum(f32(X), dim = 1), y [M]" + at, y, want, 1e-4, 1e-5);
    }
    {
        std::vector<float> mu(size_t(N), -7.0f), amax(size_t(N), -7.0f);
        std::vector<double> wantMu(size_t(N), 0.0), wantMax(size_t(N), 0.0);
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                wantMu[j] += double(X[size_t(i) * N + j]) / M;
                wantMax[j] = std::max(wantMax[j], std::fabs(double(X[size_t(i) * N + j])));
            }
        expectStatus("col_stats status" + at, tl_kernels::col_stats(X.data(), mu.data(), amax.data(), M, N), 0);
        check("whole tensors: mean(X, dim = 0) into [1, N]" + at, mu, wantMu, 1e-5, 1e-5);
        check("whole tensors: max(abs(X), dim = 0) into [1, N]" + at, amax, wantMax, 0, 0);
    }
    {
        std::vector<float> Y(X.size(), -7.0f), C(X.size(), -7.0f);
        std::vector<double> want(X.size()), wantC(X.size()), colMean(size_t(N), 0.0);
        for (int i = 0; i < M; ++i) {
            double mx = -INFINITY, den = 0;
            for (int j = 0; j < N; ++j) mx = std::max(mx, double(X[size_t(i) * N + j]));
            for (int j = 0; j < N; ++j) den += std::exp(double(X[size_t(i) * N + j]) - mx);
            for (int j = 0; j < N; ++j) want[size_t(i) * N + j] = std::exp(double(X[size_t(i) * N + j]) - mx) / den;
            for (int j = 0; j < N; ++j) colMean[j] += double(X[size_t(i) * N + j]) / M;
        }
        for (size_t e = 0; e < X.size(); ++e) wantC[e] = double(X[e]) - colMean[e % N];
        expectStatus("softmax_by_hand status" + at, tl_kernels::softmax_by_hand(X.data(), Y.data(), M, N), 0);
        check("whole tensors: e = exp(X - max(X, dim = 1)); Y = e / sum(e, dim = 1)" + at, Y, want, 1e-6, 1e-5);
        expectStatus("center_cols status" + at, tl_kernels::center_cols(X.data(), C.data(), M, N), 0);
        check("whole tensors: Y = X - mean(X, dim = 0)" + at, C, wantC, 1e-5, 1e-5);
    }
}

// Logsumexp: rows at up to +-120 (exp overflows f32 past 88: a sum of exp(X) as written would be
// inf), the max-subtracted spelling in f16, over the columns (a mean), and of a product.
void wtLogSumExp(int M, int N, int K) {
    const std::string at = wtAt({M, N});
    auto X = random<float>(size_t(M) * N, 215, -120.0, 120.0);
    for (int j = 0; j < N / 2; ++j) X[j] = -INFINITY;  // row 0: chunks of -inf first (a running maximum of -inf)
    std::vector<tl::half> Xh(X.size());
    for (size_t e = 0; e < X.size(); ++e) Xh[e] = tl::half(X[e] / 40.0f);
    auto lseOf = [](const std::vector<double>& v) {
        double mx = -INFINITY, s = 0;
        for (double x : v) mx = std::max(mx, x);
        for (double x : v) s += std::exp(x - mx);
        return mx + std::log(s);
    };
    std::vector<double> want(M), wantH(M), wantCols(N);
    for (int i = 0; i < M; ++i) {
        std::vector<double> row(N), rowH(N);
        for (int j = 0; j < N; ++j) {
            row[j] = X[size_t(i) * N + j];
            rowH[j] = toDouble(Xh[size_t(i) * N + j]);
        }
        want[i] = lseOf(row);
        wantH[i] = lseOf(rowH);
    }
    for (int j = 0; j < N; ++j) {
        std::vector<double> col(M);
        for (int i = 0; i < M; ++i) col[i] = X[size_t(i) * N + j];
        wantCols[j] = lseOf(col) - std::log(double(M));
    }
    std::vector<float> y(M, -7.0f), yh(M, -7.0f), yc(N, -7.0f);
    expectStatus("lse status" + at, tl_kernels::lse(X.data(), y.data(), M, N), 0);
    check("whole tensors: y = log(sum(exp(X), dim = 1)), |X| up to 120" + at, y, want, 1e-4, 1e-5);
    expectStatus("lse_shift status" + at, tl_kernels::lse_shift(Xh.data(), yh.data(), M, N), 0);
    check("whole tensors: m = max(X, dim = 1); y = m + log(sum(exp(X - m), dim = 1)), f16" + at, yh, wantH, 1e-4, 1e-5);
    expectStatus("lse_cols status" + at, tl_kernels::lse_cols(X.data(), yc.data(), M, N), 0);
    check("whole tensors: y = log(mean(exp(X), dim = 0)), y [1, N]" + at, yc, wantCols, 1e-4, 1e-5);
    // Of a product: X @ W at up to ~+-100 (f16 operands, K terms).
    auto A = random<tl::half>(size_t(M) * K, 216, -3.0, 3.0), W = random<tl::half>(size_t(K) * N, 217, -3.0, 3.0);
    std::vector<double> wantP(M);
    for (int i = 0; i < M; ++i) {
        std::vector<double> row(N, 0.0);
        for (int k = 0; k < K; ++k)
            for (int j = 0; j < N; ++j) row[j] += toDouble(A[size_t(i) * K + k]) * toDouble(W[size_t(k) * N + j]);
        wantP[i] = lseOf(row);
    }
    std::vector<float> yp(M, -7.0f);
    expectStatus("lse_product status" + at, tl_kernels::lse_product(A.data(), W.data(), yp.data(), M, K, N), 0);
    check("whole tensors: y = log(sum(exp(f32(X @ W)), dim = 1))" + at + "x" + std::to_string(K), yp, wantP, 1e-3, 1e-5);
}

void wtReductions3(int B, int S, int N) {
    const std::string at = wtAt({B, S, N});
    auto X = random<tl::bfloat16>(size_t(B) * S * N, 202, -4.0, 4.0);
    std::vector<tl::bfloat16> Y(X.size(), tl::bfloat16(-7.0f));
    std::vector<double> want(X.size());
    for (size_t row = 0; row < size_t(B) * S; ++row) {
        double mn = INFINITY;
        for (int j = 0; j < N; ++j) mn = std::min(mn, toDouble(X[row * N + j]));
        for (int j = 0; j < N; ++j) want[row * N + j] = toDouble(X[row * N + j]) - mn;
    }
    expectStatus("shift_min3 status" + at, tl_kernels::shift_min3(X.data(), Y.data(), B, S, N), 0);
    check("whole tensors: Y = X - min(X, dim = -1), rank 3, bf16" + at, Y, want, 4e-2, 1e-2);
    // Over dimension 1 of [B, S, N]: per batch index and column.
    auto Xf = random<float>(X.size(), 214, -2.0, 2.0);
    std::vector<float> Z(X.size(), -7.0f);
    std::vector<double> wantZ(X.size());
    for (int b = 0; b < B; ++b)
        for (int j = 0; j < N; ++j) {
            double mx = -INFINITY, mean = 0;
            for (int s = 0; s < S; ++s) {
                const double x = Xf[(size_t(b) * S + s) * N + j];
                mx = std::max(mx, x);
                mean += x / S;
            }
            for (int s = 0; s < S; ++s) {
                const size_t e = (size_t(b) * S + s) * N + j;
                wantZ[e] = (Xf[e] >= mx ? 1.0 : 0.0) + Xf[e] - mean;
            }
        }
    expectStatus("col_max_where3 status" + at, tl_kernels::col_max_where3(Xf.data(), Z.data(), B, S, N), 0);
    check("whole tensors: where(X >= max(X, dim = 1), 1, 0) + X - mean(X, dim = 1), rank 3" + at, Z, wantZ, 1e-5, 1e-5);
}

void wtWhereAndViews(int M, int N) {
    const std::string at = wtAt({M, N});
    auto X = random<float>(size_t(M) * N, 203, -2.0, 2.0), t = random<float>(size_t(N), 204, 0.2, 1.0);
    auto b = random<float>(size_t(M), 205, -1.0, 1.0);
    std::vector<float> Y(X.size(), -7.0f), T(X.size(), -7.0f);
    std::vector<double> want(X.size()), wantT(X.size());
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double x = X[size_t(i) * N + j], tj = t[j];
            want[size_t(i) * N + j] = x > tj ? x - tj : x < -tj ? x + tj : 0.0;
            wantT[size_t(j) * M + i] = 2.0 * x + b[i];
        }
    expectStatus("soft_threshold status" + at, tl_kernels::soft_threshold(X.data(), t.data(), Y.data(), M, N), 0);
    check("whole tensors: where(X > t, X - t, where(X < -t, X + t, 0))" + at, Y, want, 1e-6, 1e-6);
    expectStatus("transpose_bias status" + at, tl_kernels::transpose_bias(X.data(), b.data(), T.data(), M, N), 0);
    check("whole tensors: Y = transpose(X) * 2 + b, Y [N, M]" + at, T, wantT, 1e-6, 1e-6);
}

void wtPermutes(int A, int B, int C) {
    const std::string at = wtAt({A, B, C});
    auto X = random<tl::half>(size_t(A) * B * C, 206, -2.0, 2.0);
    std::vector<tl::half> Y(X.size(), tl::half(-7.0f)), Z(X.size(), tl::half(-7.0f));
    std::vector<double> wantY(X.size()), wantZ(X.size());
    for (int a = 0; a < A; ++a)
        for (int b = 0; b < B; ++b)
            for (int c = 0; c < C; ++c) {
                double x = toDouble(X[(size_t(a) * B + b) * C + c]);
                wantY[(size_t(c) * A + a) * B + b] = x;
                wantZ[(size_t(a) * C + c) * B + b] = toDouble(tl::half(float(x + 1.0)));
            }
    expectStatus("permute3 status" + at, tl_kernels::permute3(X.data(), Y.data(), A, B, C), 0);
    check("whole tensors: Y = permute(X, [2, 0, 1])" + at, Y, wantY, 0, 0);
    expectStatus("swap_last status" + at, tl_kernels::swap_last(X.data(), Z.data(), A, B, C), 0);
    check("whole tensors: Z = permute(X, [0, 2, 1]) + 1 in f16" + at, Z, wantZ, 0, 0);
}

void wtSlices(int M, int N) {
    const std::string at = wtAt({M, N});
    auto X = random<float>(size_t(M) * N, 207, -2.0, 2.0);
    std::vector<float> Y(size_t(M) * 48, -7.0f);
    std::vector<double> want(Y.size());
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < 48; ++j) want[size_t(i) * 48 + j] = double(X[size_t(i) * N + j]) - X[size_t(i) * N + 48 + j];
    int status = tl_kernels::slice_cols(X.data(), Y.data(), M, N);
    if (N >= 96) {
        expectStatus("slice_cols status" + at, status, 0);
        check("whole tensors: Y = X[:, 0:48] - X[:, 48:96]" + at, Y, want, 1e-6, 1e-6);
    } else {
        expectStatus("slice_cols refused (require 96 <= N)" + at, status, 1);
    }
    // d [N - 1] = x[1:] - x[:-1] over a row of X.
    std::vector<float> d(size_t(N - 1), -7.0f);
    std::vector<double> wantD(d.size());
    for (int j = 0; j + 1 < N; ++j) wantD[j] = double(X[j + 1]) - X[j];
    expectStatus("neighbours status" + at, tl_kernels::neighbours(X.data(), d.data(), N), 0);
    check("whole tensors: d = x[1:] - x[:-1]" + at, d, wantD, 1e-6, 1e-6);
    // Y = X - X[-1:] (the last row for every row); z = x[-4:-1] * 2, refused when N < 4.
    std::vector<float> Y2(X.size(), -7.0f), z(3, -7.0f);
    std::vector<double> wantY2(X.size()), wantZ(3);
    for (size_t e = 0; e < X.size(); ++e) wantY2[e] = double(X[e]) - X[size_t(M - 1) * N + e % N];
    for (int j = 0; j < 3; ++j) wantZ[j] = 2.0 * X[N - 4 + j];
    expectStatus("from_end status" + at, tl_kernels::from_end(X.data(), Y2.data(), M, N), 0);
    check("whole tensors: Y = X - X[-1:]" + at, Y2, wantY2, 1e-6, 1e-6);
    expectStatus("last3 status" + at, tl_kernels::last3(X.data(), z.data(), N), 0);
    check("whole tensors: z = x[-4:-1] * 2" + at, z, wantZ, 1e-6, 1e-6);
    expectStatus("last3 refused (require 4 <= N)" + at, tl_kernels::last3(X.data(), z.data(), 3), 1);
}

void wtTransposedGemms(int M, int N, int K) {
    const std::string at = wtAt({M, N, K});
    auto X = random<tl::half>(size_t(M) * K, 208), W = random<tl::half>(size_t(N) * K, 209);
    auto b = random<float>(size_t(M), 210);
    std::vector<float> Y(size_t(M) * N, -7.0f);
    // X [M, K] @ transpose(W [N, K]) * 0.5
    auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(X[size_t(i) * K + k]); },
                       [&](int k, int j) { return toDouble(W[size_t(j) * K + k]); });
    for (auto& v : want) v *= 0.5;
    expectStatus("gemm_nt_epilogue status" + at, tl_kernels::gemm_nt_epilogue(X.data(), W.data(), Y.data(), M, K, N), 0);
    check("whole tensors: Y = X @ transpose(W) * 0.5" + at, Y, want, 1e-3, 1e-3);
    // transpose(Xt [K, M]) @ Wk [K, N] + b [M, 1]: the same values stored the other way.
    std::vector<tl::half> Xt(X.size()), Wk(W.size());
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k) Xt[size_t(k) * M + i] = X[size_t(i) * K + k];
    for (int j = 0; j < N; ++j)
        for (int k = 0; k < K; ++k) Wk[size_t(k) * N + j] = W[size_t(j) * K + k];
    std::vector<float> Z(Y.size(), -7.0f);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) want[size_t(i) * N + j] = 2.0 * want[size_t(i) * N + j] + b[i];
    expectStatus("gemm_tn_epilogue status" + at,
                 tl_kernels::gemm_tn_epilogue(Xt.data(), Wk.data(), b.data(), Z.data(), K, M, N), 0);
    check("whole tensors: Y = transpose(X) @ W + b" + at, Z, want, 1e-3, 1e-3);
    // relu(transpose(Xt) @ transpose(W)) in bf16: both operands transposed.
    std::vector<tl::bfloat16> Xb(Xt.size()), Wb(W.size()), Yb(Y.size(), tl::bfloat16(-7.0f));
    for (size_t e = 0; e < Xt.size(); ++e) Xb[e] = tl::bfloat16(float(Xt[e]));
    for (size_t e = 0; e < W.size(); ++e) Wb[e] = tl::bfloat16(float(W[e]));
    auto wantT = matmul(M, N, K, [&](int i, int k) { return toDouble(Xb[size_t(k) * M + i]); },
                        [&](int k, int j) { return toDouble(Wb[size_t(j) * K + k]); });
    for (auto& v : wantT) v = std::max(v, 0.0);
    expectStatus("gemm_tt_epilogue status" + at, tl_kernels::gemm_tt_epilogue(Xb.data(), Wb.data(), Yb.data(), K, M, N), 0);
    check("whole tensors: Y = relu(transpose(X) @ transpose(W)), bf16" + at, Yb, wantT, 2e-2, 2e-2);
}

void wtGqa(int B, int S, int H, int G) {
    const int D = 64;
    auto Q = random<tl::half>(size_t(B) * S * H * D, 211), K = random<tl::half>(size_t(B) * S * G * D, 212),
         V = random<tl::half>(size_t(B) * S * G * D, 213);
    std::vector<tl::half> O(Q.size(), tl::half(-7.0f));
    std::vector<double> want(Q.size(), 0.0);
    auto q = [&](int b, int s, int h, int d) { return toDouble(Q[((size_t(b) * S + s) * H + h) * D + d]); };
    auto kv = [&](const std::vector<tl::half>& T, int b, int s, int g, int d) { return toDouble(T[((size_t(b) * S + s) * G + g) * D + d]); };
    for (int b = 0; b < B; ++b)
        for (int h = 0; h < H; ++h)
            for (int i = 0; i < S; ++i) {
                const int g = h / (H / G);
                std::vector<double> p(size_t(i) + 1);
                double mx = -INFINITY, sum = 0;
                for (int j = 0; j <= i; ++j) {
                    double dot = 0;
                    for (int d = 0; d < D; ++d) dot += q(b, i, h, d) * kv(K, b, j, g, d);
                    mx = std::max(mx, p[j] = dot / std::sqrt(double(D)));
                }
                for (int j = 0; j <= i; ++j) sum += p[j] = std::exp(p[j] - mx);
                for (int j = 0; j <= i; ++j)
                    for (int d = 0; d < D; ++d) want[((size_t(b) * S + i) * H + h) * D + d] += p[j] / sum * kv(V, b, j, g, d);
            }
    const std::string at = wtAt({B, S, H, G});
    expectStatus("attention_gqa status" + at, tl_kernels::attention_gqa(Q.data(), K.data(), V.data(), O.data(), B, S, H, G), 0);
    check("whole tensors: grouped-query attention, H / G query heads per key head" + at, O, want, 1e-2, 2e-2);
    if (H > 1 && H % (G + 1) != 0)
        expectStatus("attention_gqa refused (require H % G == 0)" + at,
                     tl_kernels::attention_gqa(Q.data(), K.data(), V.data(), O.data(), B, S, H, G + 1), 1);
}

} // namespace

void wholeTensorForms() {
    wtReductions(64, 128);
    wtReductions(45, 1000);  // partial row and column blocks, rows of several chunks
    wtReductions3(2, 45, 70);
    wtLogSumExp(45, 1000, 40);  // rows of several chunks, a partial last one; a partial row block
    wtLogSumExp(7, 1537, 24);
    wtWhereAndViews(64, 128);
    wtWhereAndViews(45, 70);
    wtPermutes(3, 45, 70);
    wtPermutes(2, 64, 32);
    wtSlices(45, 100);
    wtSlices(20, 70);  // too narrow for the column windows: refused
    wtTransposedGemms(72, 70, 100);
    wtTransposedGemms(128, 64, 64);
    wtGqa(1, 70, 4, 2);
    wtGqa(2, 40, 3, 1);
}

#include "attention_ref.h"
#include "corpus.h"
#include "mha_bwd_bshd.h"
#include "mha_bwd_bshd_causal.h"

using namespace harness;

namespace {

// The four launchers of one specialisation (causal or not).
struct BwdKernels {
    int (*fwd)(const tl::half*, const tl::half*, const tl::half*, tl::half*, float*, int, int, int);
    int (*prep)(const tl::half*, const tl::half*, float*, int, int, int);
    int (*bwd)(const tl::half*, const tl::half*, const tl::half*, const tl::half*, const float*, const float*, float*,
               tl::half*, tl::half*, int, int, int);
    int (*post)(const float*, tl::half*, int, int, int);
};

// All tensors [batch, seq_len, heads, dim] (dim = 64), lse and Delta [batch, heads, seq_len].
void mhaBwdBshd(int batch, int seq_len, int heads, bool causal) {
    const int dim = 64;
    const double sm_scale = 1.0 / std::sqrt(double(dim));
    size_t n = size_t(batch) * seq_len * heads * dim, nr = size_t(batch) * heads * seq_len;
    auto Q = random<tl::half>(n, 231), K = random<tl::half>(n, 232), V = random<tl::half>(n, 233);
    auto dO = random<tl::half>(n, 234);
    std::vector<tl::half> O(n, tl::half(-7.0f)), dK(n, tl::half(-7.0f)), dV(n, tl::half(-7.0f));
    std::vector<tl::half> dQ_out(n, tl::half(-7.0f));
    std::vector<float> lse(nr, -7.0f), Delta(nr, -7.0f), dQ(n, 0.0f);
    auto at = [&](int b, int s, int h, int d) { return ((size_t(b) * seq_len + s) * heads + h) * dim + d; };
    auto row = [&](int b, int h, int s) { return (size_t(b) * heads + h) * seq_len + s; };

    // The reference: P = softmax(Q K^T sm_scale), O = P V, dP = dO V^T, dS = P (dP - rowsum(P dP)),
    // dQ = dS K sm_scale, dK = dS^T Q sm_scale, dV = P^T dO.
    std::vector<double> wantO(n), wantLse(nr), wantDelta(nr), wantDQ(n, 0.0), wantDK(n, 0.0), wantDV(n, 0.0);
    std::vector<double> P(size_t(seq_len) * seq_len), dP(size_t(seq_len) * seq_len);
    for (int b = 0; b < batch; ++b)
        for (int h = 0; h < heads; ++h) {
            auto q = [&](int i, int d) { return toDouble(Q[at(b, i, h, d)]); };
            auto k = [&](int j, int d) { return toDouble(K[at(b, j, h, d)]); };
            auto v = [&](int j, int d) { return toDouble(V[at(b, j, h, d)]); };
            auto keep = [&](int i, int j) { return !causal || j <= i; };
            corpus::attentionRow(
                seq_len, seq_len, dim, sm_scale, q, k, v, keep,
                [&](int i, int d, double o) { wantO[at(b, i, h, d)] = o; },
                [&](int i, double l) { wantLse[row(b, h, i)] = l / std::log(2.0); });
            for (int i = 0; i < seq_len; ++i) {
                double delta = 0;
                for (int d = 0; d < dim; ++d) delta += wantO[at(b, i, h, d)] * toDouble(dO[at(b, i, h, d)]);
                wantDelta[row(b, h, i)] = delta;
                for (int j = 0; j < seq_len; ++j) {
                    double s = 0, dp = 0;
                    for (int d = 0; d < dim; ++d) {
                        s += q(i, d) * k(j, d);
                        dp += toDouble(dO[at(b, i, h, d)]) * v(j, d);
                    }
                    P[size_t(i) * seq_len + j] =
                        keep(i, j) ? std::exp(s * sm_scale - wantLse[row(b, h, i)] * std::log(2.0)) : 0.0;
                    dP[size_t(i) * seq_len + j] = dp;
                }
            }
            for (int i = 0; i < seq_len; ++i)
                for (int j = 0; j < seq_len; ++j) {
                    double p = P[size_t(i) * seq_len + j];
                    double ds = p * (dP[size_t(i) * seq_len + j] - wantDelta[row(b, h, i)]);
                    for (int d = 0; d < dim; ++d) {
                        wantDQ[at(b, i, h, d)] += ds * k(j, d) * sm_scale;
                        wantDK[at(b, j, h, d)] += ds * q(i, d) * sm_scale;
                        wantDV[at(b, j, h, d)] += p * toDouble(dO[at(b, i, h, d)]);
                    }
                }
        }

    BwdKernels kernels = causal ? BwdKernels{[](auto... a) { return int(tl_mha_bwd_bshd_causal::mha_bwd_bshd_fwd(a...)); },
                                             [](auto... a) { return int(tl_mha_bwd_bshd_causal::mha_bwd_bshd_prep(a...)); },
                                             [](auto... a) { return int(tl_mha_bwd_bshd_causal::mha_bwd_bshd(a...)); },
                                             [](auto... a) { return int(tl_mha_bwd_bshd_causal::mha_bwd_bshd_post(a...)); }}
                                : BwdKernels{[](auto... a) { return int(tl_kernels::mha_bwd_bshd_fwd(a...)); },
                                             [](auto... a) { return int(tl_kernels::mha_bwd_bshd_prep(a...)); },
                                             [](auto... a) { return int(tl_kernels::mha_bwd_bshd(a...)); },
                                             [](auto... a) { return int(tl_kernels::mha_bwd_bshd_post(a...)); }};
    std::string what = std::string("mha_bwd_bshd") + (causal ? " causal " : " ") +
                       corpus::dims({{"batch", batch}, {"seq_len", seq_len}, {"heads", heads}});
    expectStatus(what + " fwd status", kernels.fwd(Q.data(), K.data(), V.data(), O.data(), lse.data(), batch, seq_len, heads), 0);
    check(what + " O", O, wantO, 2e-3, 2e-2);
    check(what + " lse", lse, wantLse, 1e-3, 1e-3);
    expectStatus(what + " prep status", kernels.prep(O.data(), dO.data(), Delta.data(), batch, seq_len, heads), 0);
    check(what + " Delta", Delta, wantDelta, 5e-3, 2e-2);
    expectStatus(what + " bwd status",
                 kernels.bwd(Q.data(), K.data(), V.data(), dO.data(), lse.data(), Delta.data(), dQ.data(), dK.data(),
                             dV.data(), batch, seq_len, heads),
                 0);
    expectStatus(what + " post status", kernels.post(dQ.data(), dQ_out.data(), batch, seq_len, heads), 0);
    check(what + " dV", dV, wantDV, 5e-3, 3e-2);
    check(what + " dK", dK, wantDK, 5e-3, 3e-2);
    check(what + " dQ", dQ_out, wantDQ, 5e-3, 3e-2);
}

} // namespace

CORPUS_TEST(mha_bwd_bshd) {
    mhaBwdBshd(1, 128, 1, false);
    mhaBwdBshd(1, 100, 2, false);  // partial query and key blocks
    mhaBwdBshd(1, 100, 1, true);
}

#include "attention_ref.h"
#include "corpus.h"
#include "mha_fwd_bshd.h"
#include "mha_fwd_bshd_causal.h"

using namespace harness;

// Q, K, V, Output: [batch, seq_len, heads, dim], dim = 64 (the port's default).
static void mhaFwdBshd(int batch, int seq_len, int heads, bool causal) {
    const int dim = 64;
    size_t n = size_t(batch) * seq_len * heads * dim;
    auto Q = random<tl::half>(n, 201), K = random<tl::half>(n, 202), V = random<tl::half>(n, 203);
    std::vector<tl::half> O(n, tl::half(-7.0f));
    std::vector<double> want(n);
    auto at = [&](int b, int s, int h, int d) { return ((size_t(b) * seq_len + s) * heads + h) * dim + d; };
    for (int b = 0; b < batch; ++b)
        for (int h = 0; h < heads; ++h)
            corpus::attentionRow(
                seq_len, seq_len, dim, 1.0 / std::sqrt(double(dim)),
                [&](int i, int d) { return toDouble(Q[at(b, i, h, d)]); },
                [&](int j, int d) { return toDouble(K[at(b, j, h, d)]); },
                [&](int j, int d) { return toDouble(V[at(b, j, h, d)]); },
                [&](int i, int j) { return !causal || j <= i; },
                [&](int i, int d, double o) { want[at(b, i, h, d)] = o; });
    int status = causal ? int(tl_mha_fwd_bshd_causal::mha_fwd_bshd(Q.data(), K.data(), V.data(), O.data(), batch,
                                                                    seq_len, heads))
                        : int(tl_kernels::mha_fwd_bshd(Q.data(), K.data(), V.data(), O.data(), batch, seq_len, heads));
    std::string at_ = std::string(causal ? " causal " : " ") +
                      corpus::dims({{"batch", batch}, {"seq_len", seq_len}, {"heads", heads}});
    expectStatus("mha_fwd_bshd" + at_ + " status", status, 0);
    check("mha_fwd_bshd" + at_, O, want, 2e-3, 2e-2);
}

CORPUS_TEST(mha_fwd_bshd) {
    mhaFwdBshd(1, 128, 2, false);
    mhaFwdBshd(2, 100, 1, false);  // a partial last block of queries and of keys
    mhaFwdBshd(1, 128, 1, true);
    mhaFwdBshd(1, 100, 2, true);
}

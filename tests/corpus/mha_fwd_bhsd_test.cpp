#include "attention_ref.h"
#include "corpus.h"
#include "mha_fwd_bhsd.h"
#include "mha_fwd_bhsd_causal.h"
#include "mha_fwd_bhsd_pp_causal.h"

using namespace harness;

// Q, Output: [batch, heads, seq_q, dim]; K, V: [batch, heads, seq_kv, dim]; dim = 64. Query i is
// position past_len + i of the key sequence (past_len = seq_kv - seq_q).
// pingPong: the variant with 128 query rows over two warpgroups, 2 stages (causal).
static void mhaFwdBhsd(int batch, int heads, int seq_q, int seq_kv, bool causal, bool pingPong = false) {
    const int dim = 64;
    size_t nq = size_t(batch) * heads * seq_q * dim, nkv = size_t(batch) * heads * seq_kv * dim;
    auto Q = random<tl::half>(nq, 211), K = random<tl::half>(nkv, 212), V = random<tl::half>(nkv, 213);
    std::vector<tl::half> O(nq, tl::half(-7.0f));
    std::vector<double> want(nq);
    auto at = [&](int b, int h, int s, int S, int d) { return ((size_t(b) * heads + h) * S + s) * dim + d; };
    int past_len = seq_kv - seq_q;
    for (int b = 0; b < batch; ++b)
        for (int h = 0; h < heads; ++h)
            corpus::attentionRow(
                seq_q, seq_kv, dim, 1.0 / std::sqrt(double(dim)),
                [&](int i, int d) { return toDouble(Q[at(b, h, i, seq_q, d)]); },
                [&](int j, int d) { return toDouble(K[at(b, h, j, seq_kv, d)]); },
                [&](int j, int d) { return toDouble(V[at(b, h, j, seq_kv, d)]); },
                [&](int i, int j) { return !causal || j <= past_len + i; },
                [&](int i, int d, double o) { want[at(b, h, i, seq_q, d)] = o; });
    int status = pingPong ? int(tl_mha_fwd_bhsd_pp_causal::mha_fwd_bhsd(Q.data(), K.data(), V.data(), O.data(),
                                                                        batch, heads, seq_q, seq_kv))
                 : causal ? int(tl_mha_fwd_bhsd_causal::mha_fwd_bhsd(Q.data(), K.data(), V.data(), O.data(), batch,
                                                                    heads, seq_q, seq_kv))
                        : int(tl_kernels::mha_fwd_bhsd(Q.data(), K.data(), V.data(), O.data(), batch, heads, seq_q,
                                                       seq_kv));
    std::string what = std::string("mha_fwd_bhsd") + (pingPong ? " 2 warpgroups" : "") + (causal ? " causal " : " ") +
                       corpus::dims({{"batch", batch}, {"heads", heads}, {"seq_q", seq_q}, {"seq_kv", seq_kv}});
    expectStatus(what + " status", status, 0);
    check(what, O, want, 2e-3, 2e-2);
}

CORPUS_TEST(mha_fwd_bhsd) {
    mhaFwdBhsd(1, 2, 128, 128, false);
    mhaFwdBhsd(1, 1, 100, 200, false);  // partial query and key blocks, 100 past keys
    mhaFwdBhsd(1, 2, 64, 100, true);
    mhaFwdBhsd(2, 1, 100, 164, true);
    mhaFwdBhsd(1, 1, 200, 330, true, true);  // 130 past keys: whole and partial key blocks
}

#include "attention_ref.h"
#include "corpus.h"
#include "gqa_fwd_bshd.h"
#include "gqa_fwd_bshd_causal.h"
#include "gqa_fwd_bshd_pp.h"
#include "gqa_fwd_bshd_pp4_causal.h"

using namespace harness;

// Q, Output: [batch, seq_len, heads, dim]; K, V: [batch, seq_len, heads / groups, dim]; dim = 64,
// groups = 2 (the port's defaults).
// variant: 0 the port's defaults, 1 two warpgroups (block_M = 128, 256 threads), 2 four
// (block_M = 256, 512 threads, dim 32, causal): the ping-pong schedule on sm90.
static void gqaFwdBshd(int batch, int seq_len, int heads, bool causal, int variant = 0) {
    const int dim = variant == 2 ? 32 : 64, groups = 2, head_kv = heads / groups;
    size_t nq = size_t(batch) * seq_len * heads * dim, nkv = size_t(batch) * seq_len * head_kv * dim;
    auto Q = random<tl::half>(nq, 221), K = random<tl::half>(nkv, 222), V = random<tl::half>(nkv, 223);
    std::vector<tl::half> O(nq, tl::half(-7.0f));
    std::vector<double> want(nq);
    auto at = [&](int b, int s, int h, int H, int d) { return ((size_t(b) * seq_len + s) * H + h) * dim + d; };
    for (int b = 0; b < batch; ++b)
        for (int h = 0; h < heads; ++h)
            corpus::attentionRow(
                seq_len, seq_len, dim, 1.0 / std::sqrt(double(dim)),
                [&](int i, int d) { return toDouble(Q[at(b, i, h, heads, d)]); },
                [&](int j, int d) { return toDouble(K[at(b, j, h / groups, head_kv, d)]); },
                [&](int j, int d) { return toDouble(V[at(b, j, h / groups, head_kv, d)]); },
                [&](int i, int j) { return !causal || j <= i; },
                [&](int i, int d, double o) { want[at(b, i, h, heads, d)] = o; });
    int status = variant == 1 ? int(tl_gqa_fwd_bshd_pp::gqa_fwd_bshd(Q.data(), K.data(), V.data(), O.data(), batch,
                                                                      seq_len, heads))
                 : variant == 2 ? int(tl_gqa_fwd_bshd_pp4_causal::gqa_fwd_bshd(Q.data(), K.data(), V.data(), O.data(),
                                                                              batch, seq_len, heads))
                 : causal ? int(tl_gqa_fwd_bshd_causal::gqa_fwd_bshd(Q.data(), K.data(), V.data(), O.data(), batch,
                                                                     seq_len, heads))
                          : int(tl_kernels::gqa_fwd_bshd(Q.data(), K.data(), V.data(), O.data(), batch, seq_len, heads));
    std::string what = std::string("gqa_fwd_bshd") + (variant == 1 ? " 2 warpgroups" : variant == 2 ? " 4 warpgroups" : "") +
                       (causal ? " causal " : " ") +
                       corpus::dims({{"batch", batch}, {"seq_len", seq_len}, {"heads", heads}});
    expectStatus(what + " status", status, 0);
    check(what, O, want, 2e-3, 2e-2);
}

CORPUS_TEST(gqa_fwd_bshd) {
    gqaFwdBshd(1, 128, 4, false);
    gqaFwdBshd(1, 100, 4, false);  // a partial last block of queries and of keys
    gqaFwdBshd(1, 100, 4, true);
    gqaFwdBshd(1, 300, 2, false, 1);  // 3 query blocks of 128, 5 key blocks, both partial
    gqaFwdBshd(1, 100, 2, false, 1);
    gqaFwdBshd(1, 600, 2, true, 2);   // 3 query blocks of 256: the diagonal inside a block
    gqaFwdBshd(1, 130, 2, true, 2);
}

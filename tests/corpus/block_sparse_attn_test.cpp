#include "attention_ref.h"
#include "block_sparse_attn.h"
#include "block_sparse_attn_full.h"
#include "corpus.h"

#include <memory>

using namespace harness;

// Q, K, V, Output: [batch, heads, seq_len, dim] (dim = 64); the mask [batch, heads, 4, 4] of
// 64 x 64 blocks, random as the example's top-k mask: block 0 always on, lower triangular.
static void blockSparseAttn(int batch, int heads, int seq_len, bool causal) {
    const int dim = 64, block = 64, ds = 4;
    size_t n = size_t(batch) * heads * seq_len * dim, nm = size_t(batch) * heads * ds * ds;
    auto Q = random<tl::half>(n, 241), K = random<tl::half>(n, 242), V = random<tl::half>(n, 243);
    auto bits = random<int>(nm, 244, 0, 1);
    std::unique_ptr<bool[]> mask(new bool[nm]);
    auto mat = [&](int b, int h, int r, int c) { return ((size_t(b) * heads + h) * ds + r) * ds + c; };
    for (int b = 0; b < batch; ++b)
        for (int h = 0; h < heads; ++h)
            for (int r = 0; r < ds; ++r)
                for (int c = 0; c < ds; ++c) mask[mat(b, h, r, c)] = c <= r && (c == 0 || bits[mat(b, h, r, c)] != 0);
    std::vector<tl::half> O(n, tl::half(-7.0f));
    std::vector<double> want(n);
    auto at = [&](int b, int h, int s, int d) { return ((size_t(b) * heads + h) * seq_len + s) * dim + d; };
    for (int b = 0; b < batch; ++b)
        for (int h = 0; h < heads; ++h)
            corpus::attentionRow(
                seq_len, seq_len, dim, 1.0 / std::sqrt(double(dim)),
                [&](int i, int d) { return toDouble(Q[at(b, h, i, d)]); },
                [&](int j, int d) { return toDouble(K[at(b, h, j, d)]); },
                [&](int j, int d) { return toDouble(V[at(b, h, j, d)]); },
                [&](int i, int j) { return mask[mat(b, h, i / block, j / block)] && (!causal || j <= i); },
                [&](int i, int d, double o) { want[at(b, h, i, d)] = o; });
    int status = causal ? int(tl_kernels::block_sparse_attn(Q.data(), K.data(), V.data(), mask.get(), O.data(), batch,
                                                            heads, seq_len))
                        : int(tl_block_sparse_attn_full::block_sparse_attn(Q.data(), K.data(), V.data(), mask.get(),
                                                                           O.data(), batch, heads, seq_len));
    std::string what = std::string("block_sparse_attn") + (causal ? " causal " : " ") +
                       corpus::dims({{"batch", batch}, {"heads", heads}, {"seq_len", seq_len}});
    expectStatus(what + " status", status, 0);
    check(what, O, want, 2e-3, 2e-2);
}

CORPUS_TEST(block_sparse_attn) {
    blockSparseAttn(1, 2, 256, true);
    blockSparseAttn(1, 1, 200, true);  // a partial last block
    blockSparseAttn(1, 1, 192, false);
}

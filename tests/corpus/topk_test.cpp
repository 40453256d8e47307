#include "corpus.h"
#include "topk.h"

#include <algorithm>
#include <numeric>

using namespace harness;

namespace {

void topk(int M) {
    const int N = 128, K = 6;
    std::string at = " " + corpus::dims({{"M", M}, {"N", N}});
    auto logits = random<float>(size_t(M) * N, 151, 0.0, 1.0);
    std::vector<float> gates(size_t(M) * K, -7.0f);
    std::vector<int32_t> indices(size_t(M) * K, -7);
    std::vector<double> wantGates(gates.size()), wantIndices(indices.size());
    for (int i = 0; i < M; ++i) {
        std::vector<int> order(N);
        std::iota(order.begin(), order.end(), 0);
        const float* row = &logits[size_t(i) * N];
        // Largest first; equal values (rare with random floats) by the larger index, as the kernel.
        std::sort(order.begin(), order.end(), [&](int a, int b) { return row[a] != row[b] ? row[a] > row[b] : a > b; });
        for (int k = 0; k < K; ++k) {
            wantGates[size_t(i) * K + k] = row[order[k]];
            wantIndices[size_t(i) * K + k] = order[k];
        }
    }
    // The outputs' rows are 24 bytes: written element by element, they need no 16-byte rows.
    expectStatus("topk status" + at, int(tl_kernels::topk(logits.data(), gates.data(), indices.data(), M)), 0);
    check("topk gates" + at, gates, wantGates, 0, 0);
    check("topk indices" + at, indices, wantIndices, 0, 0);
}

} // namespace

CORPUS_TEST(topk) {
    topk(100);  // a partial block of 64 rows
}

#include "corpus.h"
#include "online_softmax.h"

#include <algorithm>
#include <cmath>

using namespace harness;

// X, Y: [M, N] f16; N a multiple of BLOCK_N = 256, as the original requires.
static void onlineSoftmax(int M, int N) {
    auto X = random<tl::half>(size_t(M) * N, 291, -4.0, 4.0);
    std::vector<tl::half> Y(X.size(), tl::half(-7.0f));
    std::vector<double> want(X.size());
    for (int i = 0; i < M; ++i) {
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < N; ++j) mx = std::max(mx, toDouble(X[size_t(i) * N + j]));
        for (int j = 0; j < N; ++j) sum += std::exp(toDouble(X[size_t(i) * N + j]) - mx);
        for (int j = 0; j < N; ++j) want[size_t(i) * N + j] = std::exp(toDouble(X[size_t(i) * N + j]) - mx) / sum;
    }
    std::string what = "online_softmax " + corpus::dims({{"M", M}, {"N", N}});
    expectStatus(what + " status", int(tl_kernels::online_softmax(X.data(), Y.data(), M, N)), 0);
    check(what, Y, want, 1e-4, 1e-2);
}

CORPUS_TEST(online_softmax) {
    onlineSoftmax(8, 1024);
    onlineSoftmax(37, 768);  // three column blocks; M is not a multiple of anything
}

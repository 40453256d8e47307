#include "corpus.h"
#include "gemm_streamk.h"

using namespace harness;

namespace {

void streamk(int M, int N, int K) {
    std::string at = " " + corpus::dims({{"M", M}, {"N", N}, {"K", K}});
    auto A = random<tl::half>(size_t(M) * K, 181), B = random<tl::half>(size_t(N) * K, 182);
    auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                       [&](int k, int j) { return toDouble(B[size_t(j) * K + k]); });
    std::vector<float> C(size_t(M) * N, 0.0f);  // partial tiles are added into C
    expectStatus("gemm_streamk status" + at, int(tl_kernels::gemm_streamk(A.data(), B.data(), C.data(), M, K, N)), 0);
    check("gemm_streamk" + at, C, want, 1e-3, 1e-3);
}

} // namespace

CORPUS_TEST(gemm_streamk) {
    // 15 tiles of 7 k-iterations (the last partial) shared by 105 of the 108 blocks, one
    // iteration each: every tile is summed atomically from pieces; no whole tiles left.
    streamk(72, 300, 200);
    // 110 tiles of 2 iterations: 2 stream-K tiles split over 4 blocks, then 108 whole tiles.
    streamk(160, 1300, 64);
}

#include "corpus.h"
#include "deepgemm_fp8.h"

using namespace harness;

namespace {

void deepgemm(int M, int N, int K) {
    const int G = 128, kGroups = (K + G - 1) / G, nGroups = (N + G - 1) / G;
    std::string at = " " + corpus::dims({{"M", M}, {"N", N}, {"K", K}});
    auto A = random<tl::fp8_e4m3>(size_t(M) * K, 201), B = random<tl::fp8_e4m3>(size_t(N) * K, 202);
    auto scalesA = random<float>(size_t(M) * kGroups, 203, 0.5, 2.0);
    auto scalesB = random<float>(size_t(nGroups) * kGroups, 204, 0.5, 2.0);
    std::vector<tl::bfloat16> C(size_t(M) * N, tl::bfloat16(-7.0f));
    std::vector<double> want(C.size(), 0.0);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j)
            for (int k = 0; k < K; ++k)
                want[size_t(i) * N + j] += toDouble(A[size_t(i) * K + k]) * toDouble(B[size_t(j) * K + k]) *
                                           scalesA[size_t(i) * kGroups + k / G] *
                                           scalesB[size_t(j / G) * kGroups + k / G];
    expectStatus("deepgemm_fp8 status" + at,
                 int(tl_kernels::deepgemm_fp8(A.data(), B.data(), scalesA.data(), scalesB.data(), C.data(), M, K, N)),
                 0);
    check("deepgemm_fp8" + at, C, want, 2e-2, 1e-2);
}

} // namespace

CORPUS_TEST(deepgemm_fp8) {
    deepgemm(72, 200, 320);  // partial tiles in M and N, three k-steps (the last partial), 12-byte scale rows
    deepgemm(128, 256, 256);
}

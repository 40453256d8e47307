#include "corpus.h"
#include "gemm_fp8.h"

using namespace harness;

namespace {

void gemmFp8(int M, int N, int K) {
    std::string at = " " + corpus::dims({{"M", M}, {"N", N}, {"K", K}});
    auto A = random<tl::fp8_e4m3>(size_t(M) * K, 141), B = random<tl::fp8_e4m3>(size_t(N) * K, 142);
    auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                       [&](int k, int j) { return toDouble(B[size_t(j) * K + k]); });
    std::vector<tl::fp8_e4m3> C(size_t(M) * N, tl::fp8_e4m3(-7.0f));
    expectStatus("gemm_fp8 status" + at, int(tl_kernels::gemm_fp8(A.data(), B.data(), C.data(), M, K, N)), 0);
    // The result is rounded to e4m3 (3 mantissa bits: within 1/16 of the value).
    check("gemm_fp8" + at, C, want, 1.0 / 256, 1.0 / 16 + 1e-6);
}

} // namespace

CORPUS_TEST(gemm_fp8) {
    gemmFp8(128, 128, 128);
    gemmFp8(144, 80, 208);  // partial tiles in M and N, four k-tiles (the last partial)
}

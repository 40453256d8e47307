#include "corpus.h"
#include "dequant_gemv.h"

using namespace harness;

namespace {

void gemv(int M, int N, int K) {
    std::string at = " " + corpus::dims({{"M", M}, {"N", N}, {"K", K}});
    auto A = random<tl::half>(size_t(M) * K, 231, 0.0, 1.0);  // torch.rand, as the original
    auto B = random<uint8_t>(size_t(N) * K / 2, 232, 0, 255);
    std::vector<tl::half> C(size_t(M) * N, tl::half(-7.0f));
    // B^T[k, n]: nibble k % 2 of byte B[n, k / 2], unsigned.
    auto want = matmul(M, N, K, [&](int m, int k) { return toDouble(A[size_t(m) * K + k]); },
                       [&](int k, int n) { return double((B[size_t(n) * K / 2 + k / 2] >> (k % 2 * 4)) & 15); });
    expectStatus("dequant_gemv status" + at,
                 int(tl_kernels::dequant_gemv(A.data(), B.data(), C.data(), M, K, N)), 0);
    // f32 sums of exact products, rounded once to f16 (half an ulp is 2^-11 relative).
    check("dequant_gemv" + at, C, want, 1e-2, 1e-3);
}

} // namespace

CORPUS_TEST(dequant_gemv) {
    gemv(1, 1024, 1024);  // the original's shape
    // A partial block of n_partition outputs and a partial k-step of 256 (K stays a multiple of
    // 32: the GPU launchers move the rows of B in 16-byte vectors).
    gemv(3, 1001, 992);
}

#include "corpus.h"
#include "fp4_ref.h"
#include "dequant_gemm_fp4.h"

#include <cmath>

using namespace harness;

namespace {

void dequantGemm(int M, int N, int K) {
    std::string at = " " + corpus::dims({{"M", M}, {"N", N}, {"K", K}});
    auto A = random<tl::half>(size_t(M) * K, 191);
    auto B = random<uint8_t>(size_t(N) * K / 2, 192, 0, 255);
    std::vector<tl::half> Ct(size_t(N) * M, tl::half(-7.0f));
    // Ct[n, m] = sum_k A[m, k] * W[n, k], W[n, k] the nibble k % 2 of byte B[n, k / 2].
    auto want = matmul(N, M, K,
                       [&](int n, int k) { return corpus::fp4Value((B[size_t(n) * K / 2 + k / 2] >> (k % 2 * 4)) & 15); },
                       [&](int k, int m) { return toDouble(A[size_t(m) * K + k]); });
    expectStatus("dequant_gemm_fp4 status" + at,
                 int(tl_kernels::dequant_gemm_fp4(A.data(), B.data(), Ct.data(), M, K, N)), 0);
    check("dequant_gemm_fp4" + at, Ct, want, 5e-2, 1e-2);
}

} // namespace

CORPUS_TEST(dequant_gemm_fp4) {
    dequantGemm(136, 200, 256);  // partial tiles in M and N; K a multiple of block_K, as the original asserts
}

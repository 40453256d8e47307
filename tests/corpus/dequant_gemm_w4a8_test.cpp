#include "corpus.h"
#include "dequant_gemm_w4a8.h"

using namespace harness;

namespace {

void w4a8(int M, int N, int K) {
    std::string at = " " + corpus::dims({{"M", M}, {"N", N}, {"K", K}});
    auto A = random<int8_t>(size_t(M) * K, 211, -128, 127);
    auto B = random<uint8_t>(size_t(N) * K / 2, 212, 0, 255);
    std::vector<int32_t> Ct(size_t(N) * M, -7);
    // W[n, k]: nibble k % 2 of byte B[n, k / 2], as a signed 4-bit value.
    auto want = matmul(N, M, K,
                       [&](int n, int k) {
                           int v = (B[size_t(n) * K / 2 + k / 2] >> (k % 2 * 4)) & 15;
                           return double(v >= 8 ? v - 16 : v);
                       },
                       [&](int k, int m) { return double(A[size_t(m) * K + k]); });
    expectStatus("dequant_gemm_w4a8 status" + at,
                 int(tl_kernels::dequant_gemm_w4a8(A.data(), B.data(), Ct.data(), M, K, N)), 0);
    check("dequant_gemm_w4a8" + at, Ct, want, 0, 0);  // integers: exact
}

} // namespace

CORPUS_TEST(dequant_gemm_w4a8) {
    w4a8(72, 100, 256);  // partial tiles in M and N; K a multiple of block_K, as the original asserts
}

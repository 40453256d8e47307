#include "corpus.h"
#include "fp4_ref.h"
#include "dequant_gemm_mxfp4.h"

#include <cmath>

using namespace harness;

namespace {

void mxfp4(int M, int N, int K) {
    std::string at = " " + corpus::dims({{"M", M}, {"N", N}, {"K", K}});
    auto A = random<tl::bfloat16>(size_t(M) * K, 221);
    auto B = random<uint8_t>(size_t(N) * K / 2, 222, 0, 255);
    auto Scale = random<uint8_t>(size_t(N) * K / 32, 223, 0, 3);  // weights scaled by 1 to 8
    auto Bias = random<tl::bfloat16>(size_t(M) * N, 224);
    std::vector<tl::bfloat16> C(size_t(M) * N, tl::bfloat16(-7.0f));
    auto want = matmul(M, N, K, [&](int m, int k) { return toDouble(A[size_t(m) * K + k]); },
                       [&](int k, int n) {
                           return corpus::fp4Value((B[size_t(n) * K / 2 + k / 2] >> (k % 2 * 4)) & 15) *
                                  double(1 << Scale[size_t(n) * K / 32 + k / 32]);
                       });
    for (size_t i = 0; i < want.size(); ++i) want[i] += toDouble(Bias[i]);
    expectStatus("dequant_gemm_mxfp4 status" + at,
                 int(tl_kernels::dequant_gemm_mxfp4(A.data(), B.data(), Scale.data(), Bias.data(), C.data(), M, K, N)),
                 0);
    check("dequant_gemm_mxfp4" + at, C, want, 0.25, 1e-2);  // bf16 result of sums up to ~100
}

} // namespace

CORPUS_TEST(dequant_gemm_mxfp4) {
    mxfp4(136, 72, 256);  // partial tiles in M and N; K a multiple of block_K, as the original asserts
}

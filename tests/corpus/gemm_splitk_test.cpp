#include "corpus.h"
#include "gemm_splitk.h"

using namespace harness;

namespace {

// Each split's K / split_k columns must be a multiple of block_K (a split's last tile would
// otherwise read the next split's columns too): the port's precondition, which every target's
// launcher checks (refusing the launch, C untouched).
void splitk(int M, int N, int K) {
    std::string at = " " + corpus::dims({{"M", M}, {"N", N}, {"K", K}});
    auto A = random<tl::half>(size_t(M) * K, 171), B = random<tl::half>(size_t(K) * N, 172);
    auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                       [&](int k, int j) { return toDouble(B[size_t(k) * N + j]); });
    std::vector<float> C(size_t(M) * N, 0.0f);
    int status = int(tl_kernels::gemm_splitk(A.data(), B.data(), C.data(), M, K, N));
    if (K % (4 * 32) != 0) {
        expectStatus("gemm_splitk refused (require K % (split_k * block_K) == 0)" + at, status, 1);
        check("gemm_splitk refused: C untouched" + at, C, std::vector<double>(C.size(), 0.0), 0, 0);
        return;
    }
    expectStatus("gemm_splitk status" + at, status, 0);
    check("gemm_splitk" + at, C, want, 1e-3, 1e-3);
}

} // namespace

CORPUS_TEST(gemm_splitk) {
    splitk(128, 128, 256);  // four splits of two k-tiles
    splitk(136, 200, 384);  // partial tiles in M and N; splits of three k-tiles
    splitk(72, 70, 256);    // N = 70: rows of 140 and 280 bytes (the general variant on GPUs)
    splitk(72, 70, 333);    // K = 333: splits of 83.25 columns, refused by the precondition
}

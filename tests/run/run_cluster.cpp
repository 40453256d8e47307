// Run layer: gemms whose grid asks for thread-block clusters (tests/run/kernels/gemm_cluster.tl)
// against references in double, at sizes no tile divides and with an odd number of blocks along
// the cluster's dimension (sm90: a padded block that only takes part in the cluster's protocol;
// other targets: cluster = 1). Called from run_primitives.cpp.
#include "harness.h"

#include "gemm_cluster.h"

#include <string>

using namespace harness;

namespace {

std::vector<double> reference(const std::vector<tl::half>& A, const std::vector<tl::half>& B, int M, int N, int K) {
    std::vector<double> C(size_t(M) * N, 0.0);
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k) {
            const double a = toDouble(A[size_t(i) * K + k]);
            for (int j = 0; j < N; ++j) C[size_t(i) * N + j] += a * toDouble(B[size_t(k) * N + j]);
        }
    return C;
}

std::string at(int M, int N, int K) {
    return " " + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
}

} // namespace

// gemm_cluster_x: clusters along the grid's x (N, blocks of 64): A's tile multicast.
void clusterGemmX(int M, int N, int K) {
    auto A = random<tl::half>(size_t(M) * K, 71), B = random<tl::half>(size_t(K) * N, 72);
    const auto want = reference(A, B, M, N, K);
    std::vector<float> C(size_t(M) * N, -7.0f);
    expectStatus("gemm_cluster_x status" + at(M, N, K), tl_kernels::gemm_cluster_x(A.data(), B.data(), C.data(), M, K, N),
                 0);
    check("cluster of 2 along N (A multicast)" + at(M, N, K), C, want, 1e-4, 1e-4);
}

// gemm_cluster_m: clusters along the grid's x (M, blocks of 64): B's two 128-byte boxes multicast,
// f16 results through the TMA-stored epilogue.
void clusterGemmM(int M, int N, int K) {
    auto A = random<tl::half>(size_t(M) * K, 73), B = random<tl::half>(size_t(K) * N, 74);
    const auto want = reference(A, B, M, N, K);
    std::vector<tl::half> C(size_t(M) * N, tl::half(-7.0f));
    expectStatus("gemm_cluster_m status" + at(M, N, K), tl_kernels::gemm_cluster_m(A.data(), B.data(), C.data(), M, K, N),
                 0);
    check("cluster of 2 along M (B multicast, staged epilogue)" + at(M, N, K), C, want, 1e-2, 1e-2);
}

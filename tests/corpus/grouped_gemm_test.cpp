#include "corpus.h"
#include "grouped_gemm.h"

using namespace harness;

namespace {

// Groups of the given sizes, each [size, K] @ B[g] ([K, N]).
void groupedGemm(const std::vector<int>& sizes, int K, int N) {
    const int block_M = 64, G = int(sizes.size());
    std::vector<int32_t> batchSizes(sizes.begin(), sizes.end()), offsets(G), paddedOffsets(G);
    int rows = 0, padded = 0, mBlocks = 0;
    for (int g = 0; g < G; ++g) {
        offsets[g] = rows;
        paddedOffsets[g] = padded;
        rows += sizes[g];
        padded += (sizes[g] + block_M - 1) / block_M * block_M;
        mBlocks += (sizes[g] + block_M - 1) / block_M;
    }
    std::string at = " groups=" + std::to_string(G) + " rows=" + std::to_string(rows) + " " +
                     corpus::dims({{"K", K}, {"N", N}});
    auto A = random<tl::half>(size_t(rows) * K, 161), B = random<tl::half>(size_t(G) * K * N, 162);
    std::vector<tl::half> C(size_t(rows) * N, tl::half(-7.0f));
    std::vector<double> want(C.size(), 0.0);
    for (int g = 0; g < G; ++g)
        for (int i = offsets[g]; i < offsets[g] + sizes[g]; ++i)
            for (int k = 0; k < K; ++k) {
                double a = toDouble(A[size_t(i) * K + k]);
                for (int j = 0; j < N; ++j) want[size_t(i) * N + j] += a * toDouble(B[(size_t(g) * K + k) * N + j]);
            }
    expectStatus("grouped_gemm status" + at,
                 int(tl_kernels::grouped_gemm(A.data(), B.data(), C.data(), batchSizes.data(), offsets.data(),
                                              paddedOffsets.data(), mBlocks, rows, K, G, N)),
                 0);
    check("grouped_gemm" + at, C, want, 1e-2, 1e-2);
}

} // namespace

CORPUS_TEST(grouped_gemm) {
    groupedGemm({70, 33, 128, 5}, 96, 72);  // groups ending inside row blocks, partial N tiles
    groupedGemm({64}, 40, 64);              // one group, the last k-tile partial
}

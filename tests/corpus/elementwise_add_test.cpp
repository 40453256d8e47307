#include "corpus.h"
#include "elementwise_add.h"

using namespace harness;

static void elementwiseAdd(int M, int N) {
    auto A = random<float>(size_t(M) * N, 101), B = random<float>(size_t(M) * N, 102);
    std::vector<float> C(size_t(M) * N, -7.0f);
    std::vector<double> want(C.size());
    for (size_t i = 0; i < want.size(); ++i) want[i] = double(A[i]) + double(B[i]);
    std::string at = " " + corpus::dims({{"M", M}, {"N", N}});
    // Rows that are not 16-byte multiples run the general variant on GPUs (harness.h, kGpu).
    expectStatus("elementwise_add status" + at, int(tl_kernels::elementwise_add(A.data(), B.data(), C.data(), M, N)), 0);
    check("elementwise_add" + at, C, want, 1e-6, 1e-6);
}

CORPUS_TEST(elementwise_add) {
    elementwiseAdd(64, 96);
    elementwiseAdd(45, 100);  // partial tiles in both directions
    elementwiseAdd(33, 30);   // rows of 120 bytes: the general variant on GPUs
    elementwiseAdd(45, 70);   // N = 70, the f32 add
}

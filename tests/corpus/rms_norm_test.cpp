#include "corpus.h"
#include "rms_norm.h"

#include <cmath>

using namespace harness;

namespace {

std::vector<double> rmsReference(const std::vector<float>& A, int M, int N) {
    std::vector<double> want(A.size());
    for (int i = 0; i < M; ++i) {
        double ss = 0;
        for (int j = 0; j < N; ++j) ss += double(A[size_t(i) * N + j]) * A[size_t(i) * N + j];
        double r = 1.0 / std::sqrt(ss / N + 1e-12);
        for (int j = 0; j < N; ++j) want[size_t(i) * N + j] = A[size_t(i) * N + j] * r;
    }
    return want;
}

void splitk(int M, int N) {
    auto A = random<float>(size_t(M) * N, 111);
    std::vector<float> B(A.size(), -7.0f);
    std::string at = " " + corpus::dims({{"M", M}, {"N", N}});
    expectStatus("rms_norm_splitk status" + at, int(tl_kernels::rms_norm_splitk(A.data(), B.data(), M, N)), 0);
    check("rms_norm_splitk" + at, B, rmsReference(A, M, N), 1e-5, 1e-4);
}

// The fused residual + RMSNorm of whole rows of block_N = 1024 columns: rows up to 1024 run (odd
// lengths through the general variant on GPUs); longer ones break `require N <= block_N` and
// every target's launcher refuses them, Y untouched.
void residual(int M, int N) {
    auto X = random<float>(size_t(M) * N, 113), R = random<float>(size_t(M) * N, 114);
    auto W = random<float>(size_t(N), 115, 0.5, 1.5);
    std::vector<float> Y(X.size(), -7.0f);
    std::vector<double> want(X.size());
    for (int i = 0; i < M; ++i) {
        double ss = 0;
        for (int j = 0; j < N; ++j) {
            double x = double(X[size_t(i) * N + j]) + R[size_t(i) * N + j];
            ss += x * x;
        }
        double r = 1.0 / std::sqrt(ss / N + 1e-6);
        for (int j = 0; j < N; ++j) want[size_t(i) * N + j] = (double(X[size_t(i) * N + j]) + R[size_t(i) * N + j]) * r * W[j];
    }
    std::string at = " " + corpus::dims({{"M", M}, {"N", N}});
    int status = int(tl_kernels::rms_norm_residual(X.data(), R.data(), W.data(), Y.data(), M, N));
    if (N > 1024) {
        expectStatus("rms_norm_residual refused (require N <= block_N)" + at, status, 1);
        check("rms_norm_residual refused: Y untouched" + at, Y, std::vector<double>(Y.size(), -7.0), 0, 0);
        return;
    }
    expectStatus("rms_norm_residual status" + at, status, 0);
    check("rms_norm_residual" + at, Y, want, 1e-5, 1e-4);
}

void whole(int M) {
    const int N = 1024;
    auto A = random<float>(size_t(M) * N, 112);
    std::vector<float> B(A.size(), -7.0f);
    std::string at = " " + corpus::dims({{"M", M}, {"N", N}});
    expectStatus("rms_norm status" + at, int(tl_kernels::rms_norm(A.data(), B.data(), M)), 0);
    check("rms_norm" + at, B, rmsReference(A, M, N), 1e-5, 1e-4);
}

} // namespace

CORPUS_TEST(rms_norm) {
    splitk(5, 1300);  // three 512-wide chunks, the last partial
    splitk(3, 1024);
    splitk(2, 1302);  // rows of 5208 bytes: the general variant on the GPU flavours
    whole(7);
    residual(3, 1024);
    residual(5, 701);   // rows of 2804 bytes: the general variant on GPUs
    residual(2, 1030);  // longer than block_N: refused
}

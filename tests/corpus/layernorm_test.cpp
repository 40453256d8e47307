#include "corpus.h"
#include "layernorm.h"

#include <cmath>

using namespace harness;

namespace {

constexpr int D = 1024;

void forwardAndBackward(int N) {
    std::string at = " " + corpus::dims({{"N", N}, {"D", D}});
    auto X = random<tl::bfloat16>(size_t(N) * D, 121), gamma = random<tl::bfloat16>(D, 122),
         beta = random<tl::bfloat16>(D, 123), DY = random<tl::bfloat16>(size_t(N) * D, 124);
    std::vector<tl::bfloat16> Y(X.size(), tl::bfloat16(-7.0f));
    std::vector<float> Mean(N, -7.0f), Rstd(N, -7.0f);

    std::vector<double> wantY(X.size()), wantMean(N), wantRstd(N);
    for (int i = 0; i < N; ++i) {
        double s = 0, ss = 0;
        for (int j = 0; j < D; ++j) {
            double x = toDouble(X[size_t(i) * D + j]);
            s += x;
            ss += x * x;
        }
        double mean = s / D, rstd = 1.0 / std::sqrt(ss / D - mean * mean + 1e-5);
        wantMean[i] = mean;
        wantRstd[i] = rstd;
        for (int j = 0; j < D; ++j)
            wantY[size_t(i) * D + j] =
                (toDouble(X[size_t(i) * D + j]) - mean) * rstd * toDouble(gamma[j]) + toDouble(beta[j]);
    }
    expectStatus("layernorm_fwd status" + at,
                 int(tl_kernels::layernorm_fwd(X.data(), gamma.data(), beta.data(), Y.data(), Mean.data(), Rstd.data(), N)),
                 0);
    check("layernorm_fwd Y" + at, Y, wantY, 2e-2, 1e-2);
    check("layernorm_fwd Mean" + at, Mean, wantMean, 1e-5, 1e-4);
    check("layernorm_fwd Rstd" + at, Rstd, wantRstd, 1e-5, 1e-4);

    // The backward pass from the forward's saved statistics (as the original's autograd does).
    std::vector<tl::bfloat16> DX(X.size(), tl::bfloat16(-7.0f));
    std::vector<float> DGamma(D, 0.0f), DBeta(D, 0.0f);
    std::vector<double> wantDX(X.size()), wantDGamma(D, 0.0), wantDBeta(D, 0.0);
    for (int i = 0; i < N; ++i) {
        double m = Mean[i], r = Rstd[i], sumDxHat = 0, sumDxHatXHat = 0;
        std::vector<double> xHat(D), dxHat(D);
        for (int j = 0; j < D; ++j) {
            double dy = toDouble(DY[size_t(i) * D + j]);
            xHat[j] = (toDouble(X[size_t(i) * D + j]) - m) * r;
            dxHat[j] = dy * toDouble(gamma[j]);
            sumDxHat += dxHat[j];
            sumDxHatXHat += dxHat[j] * xHat[j];
            wantDGamma[j] += dy * xHat[j];
            wantDBeta[j] += dy;
        }
        for (int j = 0; j < D; ++j)
            wantDX[size_t(i) * D + j] = r * (dxHat[j] - sumDxHat / D - xHat[j] * sumDxHatXHat / D);
    }
    expectStatus("layernorm_bwd status" + at,
                 int(tl_kernels::layernorm_bwd(DY.data(), X.data(), gamma.data(), Mean.data(), Rstd.data(), DX.data(),
                                               DGamma.data(), DBeta.data(), N)),
                 0);
    check("layernorm_bwd DX" + at, DX, wantDX, 3e-2, 2e-2);
    check("layernorm_bwd DGamma" + at, DGamma, wantDGamma, 1e-3, 1e-4);
    check("layernorm_bwd DBeta" + at, DBeta, wantDBeta, 1e-3, 1e-4);
}

} // namespace

CORPUS_TEST(layernorm) {
    forwardAndBackward(40);  // one whole block of 32 rows and a partial one
}

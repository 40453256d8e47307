#include "corpus.h"
#include "per_token_cast_fp8.h"

#include <algorithm>
#include <cmath>

using namespace harness;

namespace {

void cast(int M, int N) {
    const int G = 128, groups = (N + G - 1) / G;
    std::string at = " " + corpus::dims({{"M", M}, {"N", N}});
    auto X = random<float>(size_t(M) * N, 131, -3.0, 3.0);
    std::vector<tl::fp8_e4m3> Q(X.size(), tl::fp8_e4m3(-7.0f));
    std::vector<float> S(size_t(M) * groups, -7.0f);
    std::vector<double> wantQ(X.size()), wantS(S.size());
    for (int i = 0; i < M; ++i)
        for (int g = 0; g < groups; ++g) {
            double amax = 0;
            for (int j = g * G; j < std::min(N, (g + 1) * G); ++j) amax = std::max(amax, std::fabs(double(X[size_t(i) * N + j])));
            double s = std::max(amax, 1e-4) / 448.0;
            wantS[size_t(i) * groups + g] = s;
            for (int j = g * G; j < std::min(N, (g + 1) * G); ++j)
                wantQ[size_t(i) * N + j] = std::clamp(X[size_t(i) * N + j] / s, -448.0, 448.0);
        }
    expectStatus("per_token_cast_fp8 status" + at, int(tl_kernels::per_token_cast_fp8(X.data(), Q.data(), S.data(), M, N)),
                 0);
    check("per_token_cast_fp8 scales" + at, S, wantS, 1e-7, 1e-5);
    // e4m3 keeps 3 mantissa bits: rounding moves a value by at most 1/16 of it (2^-10 near 0).
    check("per_token_cast_fp8 values" + at, Q, wantQ, 1.0 / 512, 1.0 / 16 + 1e-6);
}

} // namespace

CORPUS_TEST(per_token_cast_fp8) {
    cast(20, 512);  // a partial row block of 8
    cast(9, 1008);  // a partial group at the end of each row (1008 = 7 * 128 + 112)
    cast(8, 200);   // 200-byte fp8 rows (not a multiple of 16), 8-byte scale rows
}

#include "corpus.h"
#include "retention_fwd.h"

using namespace harness;

// Q, K, V: [B, S, H, 64], O: [1, B, S, H, 64] (one key block):
// O[t] = sum_{s <= t} gamma_h^(t - s) (q_t . k_s) / sqrt(DK) v_s, gamma_h = 1 - 2^(-5 - h).
static void retentionFwd(int B, int S, int H) {
    const int DK = 64, DV = 64;
    auto Q = random<tl::half>(size_t(B) * S * H * DK, 261), K = random<tl::half>(size_t(B) * S * H * DK, 262);
    auto V = random<tl::half>(size_t(B) * S * H * DV, 263);
    std::vector<tl::half> O(size_t(B) * S * H * DV, tl::half(-7.0f));
    std::vector<double> want(O.size(), 0.0);
    auto qk = [&](int b, int s, int h, int d) { return ((size_t(b) * S + s) * H + h) * DK + d; };
    auto vo = [&](int b, int s, int h, int d) { return ((size_t(b) * S + s) * H + h) * DV + d; };
    const double scale = 1.0 / std::sqrt(double(DK));
    for (int b = 0; b < B; ++b)
        for (int h = 0; h < H; ++h) {
            double gamma = 1.0 - std::exp2(-5.0 - h);
            for (int t = 0; t < S; ++t)
                for (int s = 0; s <= t; ++s) {
                    double dot = 0;
                    for (int d = 0; d < DK; ++d) dot += toDouble(Q[qk(b, t, h, d)]) * toDouble(K[qk(b, s, h, d)]);
                    double w = dot * scale * std::pow(gamma, t - s);
                    for (int d = 0; d < DV; ++d) want[vo(b, t, h, d)] += w * toDouble(V[vo(b, s, h, d)]);
                }
        }
    std::string what = "retention_fwd " + corpus::dims({{"B", B}, {"S", S}, {"H", H}});
    expectStatus(what + " status", int(tl_kernels::retention_fwd(Q.data(), K.data(), V.data(), O.data(), B, S, H)), 0);
    check(what, O, want, 2e-2, 2e-2);
}

CORPUS_TEST(retention_fwd) {
    retentionFwd(1, 128, 2);
    retentionFwd(1, 200, 2);  // a partial last chunk
}

// Run layer: the fp8 (e4m3) flash attention forward (tests/run/kernels/flash_attention_fp8.tl)
// against a double reference that takes the fp8 inputs as they are (times their scales) and
// the probabilities exactly: the kernel rounds them to e4m3 for its P V gemm, whose 3 mantissa
// bits (a relative error up to 1/16 per probability, averaging out over the keys) set the
// tolerance.
#include "harness.h"

#include "flash_attention_fp8.h"

#include <cmath>
#include <string>

using namespace harness;

void flashAttentionFp8(int Bn, int S, int H) {
    const int D = 128;
    const float qScale = 0.5f, kScale = 1.5f, vScale = 2.0f;
    const size_t n = size_t(Bn) * S * H * D;
    auto Q = random<tl::fp8_e4m3>(n, 71, -2.0, 2.0), K = random<tl::fp8_e4m3>(n, 72, -2.0, 2.0);
    auto Vt = random<tl::fp8_e4m3>(n, 73);  // [B, H, D, S]
    std::vector<tl::half> O(n, tl::half(-7.0f));
    std::vector<double> want(n), score(S);
    auto at = [&](int b, int s, int h, int d) { return ((size_t(b) * S + s) * H + h) * D + d; };
    for (int b = 0; b < Bn; ++b)
        for (int h = 0; h < H; ++h)
            for (int i = 0; i < S; ++i) {
                double mx = -INFINITY;
                for (int j = 0; j < S; ++j) {
                    double dot = 0;
                    for (int d = 0; d < D; ++d)
                        dot += toDouble(Q[at(b, i, h, d)]) * qScale * toDouble(K[at(b, j, h, d)]) * kScale;
                    score[j] = dot / std::sqrt(double(D));
                    mx = std::max(mx, score[j]);
                }
                double sum = 0;
                for (int j = 0; j < S; ++j) sum += (score[j] = std::exp(score[j] - mx));
                for (int d = 0; d < D; ++d) {
                    double o = 0;
                    for (int j = 0; j < S; ++j) o += score[j] * toDouble(Vt[((size_t(b) * H + h) * D + d) * S + j]) * vScale;
                    want[at(b, i, h, d)] = o / sum;
                }
            }
    const std::string name =
        "flash_attention_fp8 B=" + std::to_string(Bn) + " S=" + std::to_string(S) + " H=" + std::to_string(H);
    expectStatus(name + " status",
                 tl_kernels::flash_attention_fp8(Q.data(), K.data(), Vt.data(), O.data(), qScale, kScale, vScale, Bn, S, H),
                 0);
    // Measured here: at most 0.015 off, outputs up to 0.88 (the probabilities' rounding).
    check(name, O, want, 2.5e-2, 1e-2);
}

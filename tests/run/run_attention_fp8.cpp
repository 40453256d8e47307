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
    auto at = [&](int b, int s, int h, int d) { return ((size_t(b) * S + s) * H + h) * D + d; };
    std::vector<double> want = attention(
        Bn, S, H, D, [&](int b, int s, int h, int d) { return toDouble(Q[at(b, s, h, d)]) * qScale; },
        [&](int b, int s, int h, int d) { return toDouble(K[at(b, s, h, d)]) * kScale; },
        [&](int b, int s, int h, int d) { return toDouble(Vt[((size_t(b) * H + h) * D + d) * S + s]) * vScale; });
    const std::string name =
        "flash_attention_fp8 B=" + std::to_string(Bn) + " S=" + std::to_string(S) + " H=" + std::to_string(H);
    expectStatus(name + " status",
                 tl_kernels::flash_attention_fp8(Q.data(), K.data(), Vt.data(), O.data(), qScale, kScale, vScale, Bn, S, H),
                 0);
    // Measured here: at most 0.015 off, outputs up to 0.88 (the probabilities' rounding).
    check(name, O, want, 2.5e-2, 1e-2);
}

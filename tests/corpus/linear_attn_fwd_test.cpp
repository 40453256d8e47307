#include "corpus.h"
#include "linear_attn_fwd.h"

using namespace harness;

// Q, K: [B, S, H, 64], V, O: [B, S, H, 64], final_state [B, H, 64, 64]:
// O[t] = sum_{s <= t} (q_t . k_s) / sqrt(DK) v_s, final_state = sum_s k_s^T v_s.
static void linearAttnFwd(int B, int S, int H) {
    const int DK = 64, DV = 64;
    auto Q = random<tl::half>(size_t(B) * S * H * DK, 251), K = random<tl::half>(size_t(B) * S * H * DK, 252);
    auto V = random<tl::half>(size_t(B) * S * H * DV, 253);
    std::vector<float> O(size_t(B) * S * H * DV, 0.0f), state(size_t(B) * H * DK * DV, -7.0f);
    std::vector<double> wantO(O.size(), 0.0), wantState(state.size(), 0.0);
    auto qk = [&](int b, int s, int h, int d) { return ((size_t(b) * S + s) * H + h) * DK + d; };
    auto vo = [&](int b, int s, int h, int d) { return ((size_t(b) * S + s) * H + h) * DV + d; };
    const double scale = 1.0 / std::sqrt(double(DK));
    for (int b = 0; b < B; ++b)
        for (int h = 0; h < H; ++h) {
            for (int t = 0; t < S; ++t)
                for (int s = 0; s <= t; ++s) {
                    double dot = 0;
                    for (int d = 0; d < DK; ++d) dot += toDouble(Q[qk(b, t, h, d)]) * toDouble(K[qk(b, s, h, d)]);
                    for (int d = 0; d < DV; ++d) wantO[vo(b, t, h, d)] += dot * scale * toDouble(V[vo(b, s, h, d)]);
                }
            for (int s = 0; s < S; ++s)
                for (int i = 0; i < DK; ++i)
                    for (int j = 0; j < DV; ++j)
                        wantState[((size_t(b) * H + h) * DK + i) * DV + j] +=
                            toDouble(K[qk(b, s, h, i)]) * toDouble(V[vo(b, s, h, j)]);
        }
    std::string what = "linear_attn_fwd " + corpus::dims({{"B", B}, {"S", S}, {"H", H}});
    expectStatus(what + " status", int(tl_kernels::linear_attn_fwd(Q.data(), K.data(), V.data(), O.data(), state.data(), B, S, H)), 0);
    check(what + " O", O, wantO, 2e-2, 2e-2);
    check(what + " final_state", state, wantState, 1e-3, 1e-4);
}

CORPUS_TEST(linear_attn_fwd) {
    linearAttnFwd(1, 128, 2);
    linearAttnFwd(2, 100, 1);  // a partial last chunk
}

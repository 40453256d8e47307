#include "convolution.h"
#include "convolution_s2d2.h"
#include "corpus.h"

using namespace harness;

namespace {

// out[n, oh, ow, f] = sum over (kh, kw, c) of data[n, oh * S + kh * D - P, ow * S + kw * D - P, c]
// * weight[kh, kw, c, f], taps in the padding counting zero (K = 3; the port's S = 1, D = 1,
// P = 1, its variant convolution_s2d2's S = 2, D = 2, P = 2).
void convolution(int N, int H, int W, int C, int F, bool s2d2 = false) {
    const int S = s2d2 ? 2 : 1, D = s2d2 ? 2 : 1, P = s2d2 ? 2 : 1, K = 3;
    const int OH = (H + 2 * P - D * (K - 1) - 1) / S + 1, OW = (W + 2 * P - D * (K - 1) - 1) / S + 1;
    std::string at = std::string(s2d2 ? " (stride 2, dilation 2, pad 2)" : "") + " " +
                     corpus::dims({{"N", N}, {"H", H}, {"W", W}, {"C", C}, {"F", F}});
    auto data = random<tl::half>(size_t(N) * H * W * C, 151), weight = random<tl::half>(size_t(K) * K * C * F, 152);
    std::vector<tl::half> out(size_t(N) * OH * OW * F, tl::half(-7.0f));
    std::vector<double> want(out.size(), 0.0);
    for (int n = 0; n < N; ++n)
        for (int oh = 0; oh < OH; ++oh)
            for (int ow = 0; ow < OW; ++ow)
                for (int kh = 0; kh < K; ++kh)
                    for (int kw = 0; kw < K; ++kw) {
                        int h = oh * S + kh * D - P, w = ow * S + kw * D - P;
                        if (h < 0 || h >= H || w < 0 || w >= W) continue;
                        for (int c = 0; c < C; ++c) {
                            double x = toDouble(data[((size_t(n) * H + h) * W + w) * C + c]);
                            for (int f = 0; f < F; ++f)
                                want[((size_t(n) * OH + oh) * OW + ow) * F + f] +=
                                    x * toDouble(weight[((size_t(kh) * K + kw) * C + c) * F + f]);
                        }
                    }
    // Channels that are not whole 16-byte vectors (the im2col gathers) and filter rows that are not
    // 16-byte multiples run the general variant on GPUs.
    int status = s2d2 ? int(tl_convolution_s2d2::convolution(data.data(), weight.data(), out.data(), N, H, W, C, F))
                      : int(tl_kernels::convolution(data.data(), weight.data(), out.data(), N, H, W, C, F));
    expectStatus("convolution status" + at, status, 0);
    check("convolution" + at, out, want, 1e-2, 1e-2);
}

} // namespace

CORPUS_TEST(convolution) {
    convolution(2, 9, 9, 16, 40);   // M = 162 rows, F = 40 columns, K * K * C = 144: no tile multiple
    convolution(1, 7, 12, 8, 24);   // H != W, one partial k-tile of 72
    convolution(1, 6, 5, 12, 16);   // 12 channels: the general variant on GPUs
    convolution(1, 5, 6, 8, 20);    // 20 filters: rows of 40 bytes
    convolution(1, 5, 7, 64, 24);   // C = 64: one filter tap a k-tile, 18 k-tiles
    // Stride 2, dilation 2, pad 2: OH = 5, OW = 4, 40 rows, K * K * C = 216 columns (a k-tile of
    // 64 spans taps of 24 channels); OH = 3, OW = 4 with 32 channels (two taps a k-tile); the
    // general variant (12 channels).
    convolution(2, 9, 7, 24, 40, true);
    convolution(1, 6, 8, 32, 24, true);
    convolution(1, 5, 5, 12, 16, true);
}

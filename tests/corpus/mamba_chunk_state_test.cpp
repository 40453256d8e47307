#include "corpus.h"
#include "mamba_chunk_state.h"
#include "mamba_ref.h"

#include <cmath>

using namespace harness;

// The port's defaults: chunk_size 128, ngroups 1, headdim 64, dstate 64.
static void mambaChunkState(int batch, int seqlen, int nheads) {
    const int cs = 128, ngroups = 1, headdim = 64, dstate = 64;
    const int nchunks = (seqlen + cs - 1) / cs, per_group = nheads / ngroups;
    auto Bm = random<tl::half>(size_t(batch) * seqlen * ngroups * dstate, 281);
    auto x = random<tl::half>(size_t(batch) * seqlen * nheads * headdim, 282);
    std::vector<tl::half> dt, dA;
    corpus::mambaDecays(batch, nheads, nchunks, cs, 283, dt, dA);
    std::vector<tl::half> out(size_t(batch) * nchunks * nheads * headdim * dstate, tl::half(-7.0f));
    std::vector<double> want(out.size(), 0.0);
    auto dec = [&](const std::vector<tl::half>& v, int b, int h, int c, int l) {
        return toDouble(v[((size_t(b) * nheads + h) * nchunks + c) * cs + l]);
    };
    for (int b = 0; b < batch; ++b)
        for (int h = 0; h < nheads; ++h)
            for (int t = 0; t < seqlen; ++t) {
                int c = t / cs, l = t % cs, g = h / per_group;
                double w = std::exp(dec(dA, b, h, c, cs - 1) - dec(dA, b, h, c, l)) * dec(dt, b, h, c, l);
                for (int p = 0; p < headdim; ++p) {
                    double xv = toDouble(x[((size_t(b) * seqlen + t) * nheads + h) * headdim + p]) * w;
                    for (int n = 0; n < dstate; ++n)
                        want[(((size_t(b) * nchunks + c) * nheads + h) * headdim + p) * dstate + n] +=
                            xv * toDouble(Bm[((size_t(b) * seqlen + t) * ngroups + g) * dstate + n]);
                }
            }
    std::string what = "mamba_chunk_state " + corpus::dims({{"batch", batch}, {"seqlen", seqlen}, {"nheads", nheads}});
    expectStatus(what + " status",
                 int(tl_kernels::mamba_chunk_state(Bm.data(), x.data(), dt.data(), dA.data(), out.data(), batch, seqlen,
                                                   nheads)),
                 0);
    check(what, out, want, 2e-2, 2e-2);
}

CORPUS_TEST(mamba_chunk_state) {
    mambaChunkState(1, 256, 2);
    mambaChunkState(2, 200, 1);  // a partial last chunk
}

#include "corpus.h"
#include "mamba_chunk_scan.h"
#include "mamba_ref.h"

#include <cmath>

using namespace harness;

// The port's defaults: chunk_size 128, ngroups 1, headdim 64, dstate 64.
static void mambaChunkScan(int batch, int seqlen, int nheads) {
    const int cs = 128, ngroups = 1, headdim = 64, dstate = 64;
    const int nchunks = (seqlen + cs - 1) / cs, per_group = nheads / ngroups;
    auto cb = random<tl::half>(size_t(batch) * nchunks * ngroups * cs * cs, 271);
    auto x = random<tl::half>(size_t(batch) * seqlen * nheads * headdim, 272);
    std::vector<tl::half> dt, dA;
    corpus::mambaDecays(batch, nheads, nchunks, cs, 273, dt, dA);
    auto C = random<tl::half>(size_t(batch) * seqlen * ngroups * dstate, 275);
    auto prev = random<tl::half>(size_t(batch) * nchunks * nheads * headdim * dstate, 276);
    auto D = random<tl::half>(nheads, 277);
    std::vector<tl::half> out(size_t(batch) * seqlen * nheads * headdim, tl::half(-7.0f));
    std::vector<double> want(out.size());

    auto X = [&](int b, int t, int h, int p) {
        return t < seqlen ? toDouble(x[((size_t(b) * seqlen + t) * nheads + h) * headdim + p]) : 0.0;
    };
    auto dec = [&](const std::vector<tl::half>& v, int b, int h, int c, int l) {
        return toDouble(v[((size_t(b) * nheads + h) * nchunks + c) * cs + l]);
    };
    for (int b = 0; b < batch; ++b)
        for (int h = 0; h < nheads; ++h) {
            int g = h / per_group;
            for (int t = 0; t < seqlen; ++t) {
                int c = t / cs, l = t % cs;
                for (int p = 0; p < headdim; ++p) {
                    double carried = 0;
                    for (int n = 0; n < dstate; ++n)
                        carried += toDouble(C[((size_t(b) * seqlen + t) * ngroups + g) * dstate + n]) *
                                   toDouble(prev[(((size_t(b) * nchunks + c) * nheads + h) * headdim + p) * dstate + n]);
                    double o = std::exp(dec(dA, b, h, c, l)) * carried;
                    for (int s = 0; s <= l; ++s)
                        o += toDouble(cb[(((size_t(b) * nchunks + c) * ngroups + g) * cs + l) * cs + s]) *
                             std::exp(dec(dA, b, h, c, l) - dec(dA, b, h, c, s)) * dec(dt, b, h, c, s) *
                             X(b, c * cs + s, h, p);
                    o += toDouble(D[h]) * X(b, t, h, p);
                    want[((size_t(b) * seqlen + t) * nheads + h) * headdim + p] = o;
                }
            }
        }
    std::string what = "mamba_chunk_scan " + corpus::dims({{"batch", batch}, {"seqlen", seqlen}, {"nheads", nheads}});
    expectStatus(what + " status",
                 int(tl_kernels::mamba_chunk_scan(cb.data(), x.data(), dt.data(), dA.data(), C.data(), prev.data(),
                                                  D.data(), out.data(), batch, seqlen, nheads)),
                 0);
    check(what, out, want, 3e-2, 2e-2);
}

CORPUS_TEST(mamba_chunk_scan) {
    mambaChunkScan(1, 256, 2);
    mambaChunkScan(2, 200, 1);  // a partial last chunk
}

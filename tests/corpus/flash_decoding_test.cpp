#include "corpus.h"
#include "flash_decoding.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>

using namespace harness;

namespace {

constexpr int kKvGroup = 4, kDim = 64;  // flash_decoding.tl's defaults

// Attention of one query token per (batch, head) over the KV positions its KV head's mask keeps.
std::vector<double> reference(const std::vector<tl::half>& Q, const std::vector<tl::half>& K,
                              const std::vector<tl::half>& V, const std::vector<uint8_t>& mask, int batch, int heads,
                              int seqlen) {
    const int groups = heads / kKvGroup;
    std::vector<double> out(size_t(batch) * heads * kDim, 0.0);
    for (int b = 0; b < batch; ++b)
        for (int h = 0; h < heads; ++h) {
            const int g = h / kKvGroup;
            std::vector<double> s(seqlen, -INFINITY);
            double top = -INFINITY;
            for (int t = 0; t < seqlen; ++t) {
                if (!mask[(size_t(b) * seqlen + t) * groups + g]) continue;
                double dot = 0;
                for (int d = 0; d < kDim; ++d)
                    dot += toDouble(Q[(size_t(b) * heads + h) * kDim + d]) *
                           toDouble(K[((size_t(b) * seqlen + t) * groups + g) * kDim + d]);
                s[t] = dot / std::sqrt(double(kDim));
                top = std::max(top, s[t]);
            }
            double sum = 0;
            for (int t = 0; t < seqlen; ++t) sum += std::isinf(s[t]) ? 0.0 : std::exp(s[t] - top);
            for (int t = 0; t < seqlen; ++t) {
                if (std::isinf(s[t])) continue;
                double p = std::exp(s[t] - top) / sum;
                for (int d = 0; d < kDim; ++d)
                    out[(size_t(b) * heads + h) * kDim + d] += p * toDouble(V[((size_t(b) * seqlen + t) * groups + g) * kDim + d]);
            }
        }
    return out;
}

// The workspace as the caller provides it: NAME_workspace_size bytes, 256-byte aligned.
// Held in a std::vector, so that it is device memory wherever the drivers' vectors are (the
// simulator; the GPU kit, whose operator new is CUDA managed memory).
struct Workspace {
    std::vector<unsigned char> storage;
    void* p = nullptr;
    explicit Workspace(size_t bytes) : storage(bytes + 512) {
        auto address = reinterpret_cast<std::uintptr_t>(storage.data());
        p = storage.data() + (256 - address % 256) % 256;
    }
};

// A launch that must return the invalid-value status (1 on every target) and write nothing.
void refused(const std::string& what, int status, const std::vector<tl::half>& O) {
    expectStatus(what + " refused", status, 1);
    check(what + " output untouched", O, std::vector<double>(O.size(), -7.0), 0, 0);
}

// `shift`: Q starts that many elements into its buffer (a view with an offset), which the
// split grid's 16-byte loads cannot take: the group's general variant runs both grids.
void decode(int batch, int heads, int seqlen, int shift = 0) {
    const int groups = heads / kKvGroup;
    const size_t kv = size_t(batch) * seqlen * groups * kDim;
    auto Qstore = random<tl::half>(size_t(batch) * heads * kDim + shift, 301);
    std::vector<tl::half> Q(Qstore.begin() + shift, Qstore.end());
    const tl::half* q = Qstore.data() + shift;
    auto K = random<tl::half>(kv, 302), V = random<tl::half>(kv, 303);
    // Mostly kept: every split of every head keeps some position.
    auto coin = random<int>(size_t(batch) * seqlen * groups, 304, 0, 9);
    std::vector<uint8_t> mask(coin.size());
    for (size_t i = 0; i < coin.size(); ++i) mask[i] = coin[i] != 0;
    std::vector<tl::half> O(size_t(batch) * heads * kDim, tl::half(-7.0f));
    std::string at = " " + corpus::dims({{"batch", batch}, {"heads", heads}, {"seqlen_kv", seqlen}, {"shift", shift}});

    const size_t bytes = tl_kernels::flash_decoding_workspace_size(batch, heads, seqlen);
    // glse f32[batch, heads, 4] and Output_partial f32[batch, heads, 4, 64], each rounded up to 256.
    const size_t glse = size_t(batch) * heads * 4 * 4, partial = size_t(batch) * heads * 4 * kDim * 4;
    expectStatus("flash_decoding workspace_size" + at, int(bytes),
                 int((glse + 255) / 256 * 256 + (partial + 255) / 256 * 256));
    Workspace ws(bytes);

    // No workspace, or a misaligned one: an error, nothing launched.
    int status = int(tl_kernels::flash_decoding(q, K.data(), V.data(), mask.data(), O.data(), batch, heads,
                                                seqlen, nullptr));
    refused("flash_decoding without a workspace" + at, status, O);
    status = int(tl_kernels::flash_decoding(q, K.data(), V.data(), mask.data(), O.data(), batch, heads, seqlen,
                                            static_cast<unsigned char*>(ws.p) + 8));
    refused("flash_decoding with a misaligned workspace" + at, status, O);

    status = int(tl_kernels::flash_decoding(q, K.data(), V.data(), mask.data(), O.data(), batch, heads, seqlen,
                                            ws.p));
    if (launched("flash_decoding" + at, status, true, O, -7.0))
        check("flash_decoding" + at, O, reference(Q, K, V, mask, batch, heads, seqlen), 2e-3, 1e-2);
    // The extern "C" twin, with the same workspace.
    std::vector<tl::half> O2(O.size(), tl::half(-7.0f));
    status = tl_flash_decoding(q, K.data(), V.data(), mask.data(), O2.data(), batch, heads, seqlen, ws.p, nullptr);
    if (launched("tl_flash_decoding" + at, status, true, O2, -7.0))
        check("tl_flash_decoding" + at, O2, widen(O), 0, 0);
}

} // namespace

CORPUS_TEST(flash_decoding) {
    decode(1, 8, 250);  // splits of 63 positions: one partial block each, the last split 61
    decode(2, 4, 203);  // one KV head; splits of 51
    decode(1, 4, 100, 1);  // Q one element into its buffer
}

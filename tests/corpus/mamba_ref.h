// Inputs shared by the Mamba chunk scan / chunk state ports: dt in (0, 1), dA_cumsum the running
// sum over each chunk of negative steps (as A * dt with A < 0), both [batch, nheads, nchunks,
// chunk_size] in f16.
#pragma once

#include "harness.h"

#include <vector>

namespace corpus {

inline void mambaDecays(int batch, int nheads, int nchunks, int chunk_size, uint32_t seed, std::vector<tl::half>& dt,
                        std::vector<tl::half>& dA_cumsum) {
    size_t n = size_t(batch) * nheads * nchunks * chunk_size;
    dt = harness::random<tl::half>(n, seed, 0.0, 1.0);
    auto steps = harness::random<double>(n, seed + 1, -0.05, 0.0);
    dA_cumsum.resize(n);
    for (size_t row = 0; row < n / chunk_size; ++row) {
        double sum = 0;
        for (int l = 0; l < chunk_size; ++l) {
            sum += steps[row * chunk_size + l];
            dA_cumsum[row * chunk_size + l] = tl::half(float(sum));
        }
    }
}

} // namespace corpus

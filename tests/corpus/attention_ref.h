// Double-precision references shared by the attention ports (tests/corpus/mha_*, gqa_*, ...).
#pragma once

#include "harness.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

namespace corpus {

// One (batch, head)'s attention: o[i, :] = softmax_j(q_i . k_j * scale, masked) v_j for
// i < Sq, j < Skv. q(i, d), k(j, d), v(j, d) read the inputs; out(i, d, value) writes; a key
// takes part when keep(i, j). Also gives the row's log-sum-exp (natural log) through lse(i, x)
// when lse is set.
inline void attentionRow(int Sq, int Skv, int D, double scale, const std::function<double(int, int)>& q,
                         const std::function<double(int, int)>& k, const std::function<double(int, int)>& v,
                         const std::function<bool(int, int)>& keep,
                         const std::function<void(int, int, double)>& out,
                         const std::function<void(int, double)>& lse = nullptr) {
    std::vector<double> qi(D), score(Skv);
    for (int i = 0; i < Sq; ++i) {
        for (int d = 0; d < D; ++d) qi[d] = q(i, d);
        double mx = -INFINITY;
        for (int j = 0; j < Skv; ++j) {
            if (!keep(i, j)) {
                score[j] = -INFINITY;
                continue;
            }
            double dot = 0;
            for (int d = 0; d < D; ++d) dot += qi[d] * k(j, d);
            score[j] = dot * scale;
            mx = std::max(mx, score[j]);
        }
        double sum = 0;
        for (int j = 0; j < Skv; ++j) sum += (score[j] = keep(i, j) ? std::exp(score[j] - mx) : 0.0);
        for (int d = 0; d < D; ++d) {
            double o = 0;
            for (int j = 0; j < Skv; ++j)
                if (score[j] != 0.0) o += score[j] * v(j, d);
            out(i, d, o / sum);
        }
        if (lse) lse(i, mx + std::log(sum));
    }
}

} // namespace corpus

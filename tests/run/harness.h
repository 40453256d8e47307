// The run layer's harness: random tensors, references in double precision, comparisons with
// dtype-appropriate tolerances, and a summary line CTest users recognise.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace harness {

inline int& failures() {
    static int n = 0;
    return n;
}
inline int& passes() {
    static int n = 0;
    return n;
}

template <typename T> double toDouble(T v) {
    if constexpr (std::is_arithmetic_v<T>) return static_cast<double>(v);
    else return static_cast<double>(static_cast<float>(v));
}

template <typename T> T fromDouble(double v) {
    if constexpr (std::is_arithmetic_v<T>) return static_cast<T>(v);
    else return T(static_cast<float>(v));
}

// Uniform values in [lo, hi); integers for integer types. Never all zeros.
template <typename T> std::vector<T> random(size_t n, uint32_t seed, double lo = -1.0, double hi = 1.0) {
    std::mt19937 gen(seed);
    std::vector<T> out(n);
    if constexpr (std::is_integral_v<T>) {
        std::uniform_int_distribution<int> dist(static_cast<int>(lo), static_cast<int>(hi));
        for (auto& v : out) v = static_cast<T>(dist(gen));
    } else {
        std::uniform_real_distribution<double> dist(lo, hi);
        for (auto& v : out) v = fromDouble<T>(dist(gen));
    }
    return out;
}

// The values a tensor of type T holds, in double.
template <typename T> std::vector<double> widen(const std::vector<T>& v) {
    std::vector<double> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) out[i] = toDouble(v[i]);
    return out;
}

// Checks |got - want| <= atol + rtol * |want| element-wise; reports the first mismatches.
template <typename T>
bool check(const std::string& what, const std::vector<T>& got, const std::vector<double>& want, double atol,
           double rtol) {
    size_t bad = 0;
    if (got.size() != want.size()) {
        std::printf("FAIL %s: %zu elements, expected %zu\n", what.c_str(), got.size(), want.size());
        ++failures();
        return false;
    }
    for (size_t i = 0; i < got.size(); ++i) {
        double g = toDouble(got[i]);
        double w = want[i];
        if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w))) {
            if (bad < 5) std::printf("  %s[%zu] = %.6g, expected %.6g\n", what.c_str(), i, g, w);
            ++bad;
        }
    }
    if (bad) {
        std::printf("FAIL %s: %zu of %zu elements differ\n", what.c_str(), bad, got.size());
        ++failures();
        return false;
    }
    std::printf("ok   %s\n", what.c_str());
    ++passes();
    return true;
}

inline void expectStatus(const std::string& what, int status, int expected) {
    if (status == expected) {
        std::printf("ok   %s (status %d)\n", what.c_str(), status);
        ++passes();
    } else {
        std::printf("FAIL %s: status %d, expected %d\n", what.c_str(), status, expected);
        ++failures();
    }
}

// The GPU flavours (TLC_RUN_GPU, the SIMT simulator) run tlc's GPU lowering, whose vector and
// TMA accesses need each tensor row to start on a 16-byte boundary: for other sizes and pointers
// the launchers run the kernel's general variant. Only a kernel built with --assume-aligned
// refuses them (with an error status, launching nothing); the cpu target has no such conditions.
#ifdef TLC_RUN_GPU
constexpr bool kGpu = true;
#else
constexpr bool kGpu = false;
#endif

// Whether the launch should run; when it should not (a launcher built with --assume-aligned, on
// a GPU), checks that it was refused and that the output was left alone.
template <typename T>
bool launched(const std::string& what, int status, bool shouldRun, const std::vector<T>& output, double untouched) {
    if (shouldRun) {
        expectStatus(what + " status", status, 0);
        return status == 0;
    }
    expectStatus(what + " refused (--assume-aligned, rows not 16-byte aligned)", status, 1);
    std::vector<double> same(output.size(), untouched);
    check(what + " output untouched", output, same, 0, 0);
    return false;
}

// C = A @ B in double from logical accessors a(i, k), b(k, j): the reference of every gemm.
template <typename FA, typename FB> std::vector<double> matmul(int M, int N, int K, FA a, FB b) {
    std::vector<double> c(size_t(M) * N, 0.0);
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k) {
            double av = a(i, k);
            for (int j = 0; j < N; ++j) c[size_t(i) * N + j] += av * b(k, j);
        }
    return c;
}

// Attention in double, laid out [B, S, H, D]: out(b, i, h) = sum_j softmax_j(q(b, i, h) . k(b, j, h)
// / sqrt(D)) v(b, j, h), from logical accessors q(b, s, h, d), k(...), v(...).
template <typename FQ, typename FK, typename FV>
std::vector<double> attention(int B, int S, int H, int D, FQ q, FK k, FV v) {
    std::vector<double> out(size_t(B) * S * H * D), score(S);
    for (int b = 0; b < B; ++b)
        for (int h = 0; h < H; ++h)
            for (int i = 0; i < S; ++i) {
                double mx = -INFINITY;
                for (int j = 0; j < S; ++j) {
                    double dot = 0;
                    for (int d = 0; d < D; ++d) dot += q(b, i, h, d) * k(b, j, h, d);
                    score[j] = dot / std::sqrt(double(D));
                    mx = std::max(mx, score[j]);
                }
                double sum = 0;
                for (int j = 0; j < S; ++j) sum += (score[j] = std::exp(score[j] - mx));
                for (int d = 0; d < D; ++d) {
                    double o = 0;
                    for (int j = 0; j < S; ++j) o += score[j] * v(b, j, h, d);
                    out[((size_t(b) * S + i) * H + h) * D + d] = o / sum;
                }
            }
    return out;
}

inline int summary() {
    std::printf("%d passed, %d failed\n", passes(), failures());
    return failures() == 0 ? 0 : 1;
}

} // namespace harness

// Runs the emitter's sample kernels (tests/unit/test_emit_kernels.h, emitted for --target=cpu
// by tests/emit/compile_check.py) through their launcher headers and compares the results with
// plain C++ references. Several generated headers in one translation unit also checks that
// their runtime sections coexist.
#include "big_transpose.h"
#include "half_scale.h"
#include "mixed_types.h"
#include "row_sum.h"
#include "vector_add.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
    if (!ok) {
        std::printf("FAIL: %s\n", what);
        ++failures;
    }
}

std::mt19937 rng(12345);
float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); }

void testVectorAdd() {
    for (int n : {1, 255, 256, 1000, 100000}) {
        std::vector<float> a(n), b(n), c(n, -1.0f);
        for (int i = 0; i < n; ++i) a[i] = uniform(-1, 1), b[i] = uniform(-1, 1);
        check(tl_kernels::vector_add(a.data(), b.data(), c.data(), n) == tl::cpu_success, "vector_add status");
        bool same = true;
        for (int i = 0; i < n; ++i) same = same && c[i] == a[i] + b[i];
        check(same, "vector_add result");
    }
    // The extern "C" twin, an empty problem and a negative size.
    std::vector<float> a(300, 1.0f), b(300, 2.0f), c(300, 0.0f);
    check(tl_vector_add(a.data(), b.data(), c.data(), 300, nullptr) == 0 && c[299] == 3.0f, "tl_vector_add");
    c.assign(300, 7.0f);
    check(tl_kernels::vector_add(a.data(), b.data(), c.data(), 0) == tl::cpu_success && c[0] == 7.0f, "empty grid");
    check(tl_kernels::vector_add(a.data(), b.data(), c.data(), -1) == tl::cpu_error_invalid_value, "negative size");
}

void testRowSum() {
    const int M = 37, N = 1000;
    std::vector<float> x(size_t(M) * N), y(M, 0.0f);
    for (auto& v : x) v = uniform(-1, 1);
    check(tl_kernels::row_sum(x.data(), y.data(), M, N) == tl::cpu_success, "row_sum status");
    bool close = true;
    for (int r = 0; r < M; ++r) {
        double ref = 0;
        for (int j = 0; j < N; ++j) ref += x[size_t(r) * N + j];
        close = close && std::fabs(ref - y[r]) < 1e-3;
    }
    check(close, "row_sum result");
}

void testHalfScale() {
    const int M = 128, K = 192;
    const float alpha = 1.75f;
    std::vector<tl::half> a(size_t(M) * K), b(size_t(M) * K, tl::half(0.0f));
    std::vector<_Float16> ref(size_t(M) * K);
    for (size_t i = 0; i < a.size(); ++i) {
        float v = uniform(-100, 100);
        a[i] = tl::half(v);
        ref[i] = static_cast<_Float16>(static_cast<float>(static_cast<_Float16>(v)) * alpha);
    }
    check(tl_kernels::half_scale(a.data(), b.data(), alpha, M, K) == tl::cpu_success, "half_scale status");
    bool same = true;
    for (size_t i = 0; i < b.size(); ++i) same = same && float(b[i]) == static_cast<float>(ref[i]);
    check(same, "half_scale result (tl::half against _Float16)");
    // Launch checks: a size that is not a multiple of 64, a misaligned tensor.
    check(tl_kernels::half_scale(a.data(), b.data(), alpha, M - 1, K) == tl::cpu_error_invalid_value, "M % 64");
    check(tl_kernels::half_scale(a.data() + 1, b.data(), alpha, 64, 64) == tl::cpu_error_invalid_value, "alignment");
}

void testBigTranspose() {
    const int R = 300;  // not a multiple of the 128-row tile
    std::vector<float> s(size_t(R) * 64), t(size_t(64) * R, -1.0f);
    for (auto& v : s) v = uniform(-1, 1);
    check(tl_kernels::big_transpose(s.data(), t.data(), R) == tl::cpu_success, "big_transpose status");
    bool same = true;
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < 64; ++c) same = same && t[size_t(c) * R + r] == s[size_t(r) * 64 + c];
    check(same, "big_transpose result");
}

void testMixedTypes() {
    const int N = 1000;
    const float scale = 0.5f;
    std::vector<tl::bfloat16> x(N);
    std::vector<tl::fp8_e4m3> q(N);
    std::vector<tl::half> h(16, tl::half(0.0f));
    std::vector<long long> c(4, 0);
    std::vector<uint16_t> counts(8, 0);
    for (auto& v : x) v = tl::bfloat16(uniform(-4, 4));
    check(tl_kernels::mixed_types(x.data(), q.data(), h.data(), c.data(), counts.data(), scale, N) == tl::cpu_success,
          "mixed status");
    check(counts == std::vector<uint16_t>(8, N / 8), "mixed_types u16 atomics");
    std::vector<long long> cref(4, 0);
    bool qok = true;
    for (int i = 0; i < N; ++i) {
        uint32_t f0 = uint32_t(i) * 2654435761u;
        uint32_t f1 = f0 ^ (f0 >> 16u);
        long long big = (long long)i * (1LL << 40) + (long long)(f1 % 7u);
        cref[(i / 16) % 4] += big;
        float xv = float(x[i]);
        bool isNew = xv >= 0.0f && !(i < 0 || (i > 1000000 && i < N));
        float y = isNew ? std::exp2(xv * 1.44269504f) + 1.0f / std::sqrt(xv * xv + 1.0f) + 1.0f / (1.0f + std::exp(-xv)) +
                              std::exp(xv) + std::pow(xv, 2.0f) + std::fabs(xv) + std::erf(xv) +
                              std::log2(std::fabs(xv) + 1.0f)
                        : std::fmin(xv, -0.5f);
        float expect = float(tl::fp8_e4m3(y * scale));
        float got = float(q[i]);
        qok = qok && std::fabs(got - expect) <= 0.125f * std::fabs(expect) + 1e-6f;
    }
    check(c == cref, "mixed_types i64 atomics");
    check(qok, "mixed_types fp8 output");
    float hsum = 0;
    for (auto v : h) hsum += float(v);
    check(std::isfinite(hsum), "mixed_types f16 atomics");
}

} // namespace

int main() {
    testVectorAdd();
    testRowSum();
    testHalfScale();
    testBigTranspose();
    testMixedTypes();
    if (failures) {
        std::printf("%d check(s) failed\n", failures);
        return 1;
    }
    std::printf("cpu_run: all checks passed\n");
    return 0;
}

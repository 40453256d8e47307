// tl::exp and tl::exp2 of floats (tl_cpu.h, section math) against the exact values (double
// precision's std::exp and std::exp2, correctly rounded to well below a float ulp): every 61st
// bit pattern (all exponents, both signs, NaNs and infinities), every float whose result is
// subnormal or next to FLT_MAX, and the special values. Errors are in units in the last place of
// the exact result (2^-149 below FLT_MIN), as documented: at most 1.3 ulp (over every float the
// maximum is 1.21 with FMA, 1.29 without), NaN for NaN, +inf where the rounded result
// overflows, 0 for -inf. The
// values go through loops over arrays, as in the kernels, so that with -O3 the vector code is
// what is checked. Built without FMA (the portable form), with AVX2 + FMA and with AVX-512; with
// AVX-512 the 16-lane forms (tl::f32x16) too, which must give the scalar forms' bits. Exit 1 on
// a failure, 77 when the CPU lacks the form.
#include "tl_cpu.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

constexpr double kMaxUlps = 1.3;
int failures = 0;

float fromBits(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// |got - exact| in ulps of the exact value; a huge value when got is of the wrong kind (NaN,
// infinite, finite).
double ulpError(float got, double exact) {
    if (std::isnan(exact)) return std::isnan(got) ? 0 : 1e30;
    if (std::isnan(got)) return 1e30;
    if (std::isinf(static_cast<float>(exact))) return std::isinf(got) && (got > 0) == (exact > 0) ? 0 : 1e30;
    if (std::isinf(got)) return 1e30;
    int e;
    std::frexp(std::fabs(exact), &e);  // |exact| in [2^(e-1), 2^e)
    double ulp = std::ldexp(1.0, std::max(e - 24, -149));
    return std::fabs(static_cast<double>(got) - exact) / ulp;
}

struct Worst {
    const char* name;
    double ulps = 0;
    float at = 0;
    long long checked = 0;
};

// The function over `xs` in one loop, then each result against the exact value.
template <typename F, typename Exact>
void check(Worst& worst, const std::vector<float>& xs, F f, Exact exact) {
    std::vector<float> out(xs.size());
    const float* in = xs.data();
    float* o = out.data();
    const size_t n = xs.size();
    for (size_t i = 0; i < n; ++i) o[i] = f(in[i]);
    for (size_t i = 0; i < n; ++i) {
        double e = ulpError(out[i], exact(static_cast<double>(xs[i])));
        if (e > worst.ulps) worst.ulps = e, worst.at = xs[i];
        if (e > kMaxUlps && ++failures <= 10)
            std::printf("FAIL %s(%a) = %a, exact %a (%.3g ulp)\n", worst.name, xs[i], out[i], exact(double(xs[i])), e);
    }
    worst.checked += static_cast<long long>(n);
}

#if defined(TL_CPU_F32X16)
// The 16-lane forms (section f32x16) against the scalar ones: the same bits for every value
// (NaN for NaN), 16 values at a time, as the emitted code calls them.
long long vectorChecked = 0;
template <typename Scalar, typename Vector>
void checkLanes(const char* name, const std::vector<float>& xs, Scalar scalar, Vector vector) {
    float in[16], out[16];
    for (size_t i = 0; i < xs.size(); i += 16) {
        for (int l = 0; l < 16; ++l) in[l] = xs[std::min(i + l, xs.size() - 1)];
        tl::store(out, vector(tl::load_f32x16(in)));
        for (int l = 0; l < 16; ++l) {
            float want = scalar(in[l]);
            if (std::isnan(want) ? std::isnan(out[l]) : std::memcmp(&want, &out[l], 4) == 0) continue;
            if (++failures <= 20) std::printf("FAIL %s(%a): %a in 16 lanes, %a alone\n", name, in[l], out[l], want);
        }
    }
    vectorChecked += static_cast<long long>(xs.size());
}
#endif

// Every float from lo to hi (same sign) in batches, and every stride-th bit pattern.
template <typename Fn>
void everyFloat(float lo, float hi, Fn fn) {
    std::uint32_t a, b;
    std::memcpy(&a, &lo, 4);
    std::memcpy(&b, &hi, 4);
    if (a > b) std::swap(a, b);
    std::vector<float> xs;
    for (std::uint64_t u = a; u <= b; ++u) {
        xs.push_back(fromBits(std::uint32_t(u)));
        if (xs.size() == (1u << 20) || u == b) fn(xs), xs.clear();
    }
}

} // namespace

int main() {
#if defined(__AVX512F__)
    if (!__builtin_cpu_supports("avx512f")) return 77;
#elif defined(__AVX2__)
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 77;
#endif
    Worst e{"exp"}, e2{"exp2"};
    auto expF = [](float x) { return tl::exp(x); };
    auto exp2F = [](float x) { return tl::exp2(x); };
    auto expD = [](double x) { return std::exp(x); };
    auto exp2D = [](double x) { return std::exp2(x); };
    auto both = [&](const std::vector<float>& xs) {
        check(e, xs, expF, expD);
        check(e2, xs, exp2F, exp2D);
#if defined(TL_CPU_F32X16)
        checkLanes("exp", xs, expF, [](tl::f32x16 x) { return tl::exp(x); });
        checkLanes("exp2", xs, exp2F, [](tl::f32x16 x) { return tl::exp2(x); });
#endif
    };
    // Every 61st bit pattern.
    std::vector<float> xs;
    for (std::uint64_t u = 0; u <= 0xffffffffull; u += 61) {
        xs.push_back(fromBits(std::uint32_t(u)));
        if (xs.size() == (1u << 20)) both(xs), xs.clear();
    }
    both(xs);
    // Subnormal results (and the last ones that round to 0), results next to FLT_MAX and just
    // past it: every float there.
    everyFloat(-104.0f, -87.0f, [&](const std::vector<float>& v) { check(e, v, expF, expD); });
    everyFloat(88.0f, 89.0f, [&](const std::vector<float>& v) { check(e, v, expF, expD); });
    everyFloat(-151.0f, -125.0f, [&](const std::vector<float>& v) { check(e2, v, exp2F, exp2D); });
    everyFloat(127.0f, 129.0f, [&](const std::vector<float>& v) { check(e2, v, exp2F, exp2D); });
    // Special values, exactly.
    const float inf = INFINITY;
    struct Case {
        float got, want;
        const char* what;
    } cases[] = {
        {tl::exp(inf), inf, "exp(inf)"},          {tl::exp(-inf), 0.0f, "exp(-inf)"},
        {tl::exp(0.0f), 1.0f, "exp(0)"},          {tl::exp(-0.0f), 1.0f, "exp(-0)"},
        {tl::exp(89.0f), inf, "exp(89)"},         {tl::exp(-104.0f), 0.0f, "exp(-104)"},
        {tl::exp2(inf), inf, "exp2(inf)"},        {tl::exp2(-inf), 0.0f, "exp2(-inf)"},
        {tl::exp2(128.0f), inf, "exp2(128)"},     {tl::exp2(-149.0f), fromBits(1), "exp2(-149)"},
        {tl::exp2(-150.0f), 0.0f, "exp2(-150)"},  {tl::exp2(127.0f), 0x1p127f, "exp2(127)"},
        {tl::exp2(-126.0f), FLT_MIN, "exp2(-126)"}, {tl::exp2(10.0f), 1024.0f, "exp2(10)"},
    };
    for (const Case& c : cases)
        if (std::memcmp(&c.got, &c.want, 4) != 0 && ++failures <= 20)
            std::printf("FAIL %s = %a, expected %a\n", c.what, c.got, c.want);
    if (!std::isnan(tl::exp(NAN)) || !std::isnan(tl::exp2(NAN)) || !std::isnan(tl::exp(-NAN))) {
        ++failures;
        std::printf("FAIL exp or exp2 of NaN is not NaN\n");
    }
#if defined(TL_CPU_F32X16)
    // fmax and fmin of 16 lanes as the scalar ones: NaN operands lose, ties give the first.
    {
        const float values[] = {NAN, -NAN, inf, -inf, 0.0f, -0.0f, 1.0f, -1.0f, 1e-40f, 3.5f};
        std::vector<float> as, bs;
        for (float a : values)
            for (float b : values) as.push_back(a), bs.push_back(b);
        for (size_t i = 0; i < as.size(); ++i) {
            float x[16], y[16], mx[16], mn[16];
            for (int l = 0; l < 16; ++l) x[l] = as[(i + l) % as.size()], y[l] = bs[(i + l) % bs.size()];
            tl::store(mx, tl::fmax(tl::load_f32x16(x), tl::load_f32x16(y)));
            tl::store(mn, tl::fmin(tl::load_f32x16(x), tl::load_f32x16(y)));
            for (int l = 0; l < 16; ++l) {
                float wantMax = tl::fmax(x[l], y[l]), wantMin = tl::fmin(x[l], y[l]);
                bool same = (std::isnan(wantMax) ? std::isnan(mx[l]) : std::memcmp(&wantMax, &mx[l], 4) == 0) &&
                            (std::isnan(wantMin) ? std::isnan(mn[l]) : std::memcmp(&wantMin, &mn[l], 4) == 0);
                if (!same && ++failures <= 20)
                    std::printf("FAIL fmax/fmin(%a, %a): %a %a in 16 lanes, %a %a alone\n", x[l], y[l], mx[l], mn[l],
                                wantMax, wantMin);
            }
        }
    }
    std::printf("exp and exp2 of 16 lanes: %lld values each, the scalar forms' bits\n", vectorChecked / 2);
#endif
    for (const Worst* w : {&e, &e2})
        std::printf("%s: %lld values, at most %.3f ulp (at %a)\n", w->name, w->checked, w->ulps, w->at);
    if (failures) std::printf("%d failures\n", failures);
    return failures ? 1 : 0;
}

// tl::half against the software conversions of tl_types.h (detail::encode_float and
// decode_float, themselves checked against CUDA's rules in the run layer). Built twice: portable
// (the software path checks itself against a double-precision model) and with F16C (the
// instruction path must give the software path's bits). Exit 1 on a difference.
#include "tl_types.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

int failures = 0;

std::uint16_t softwareEncode(float f) {
    return std::uint16_t(tl::detail::encode_float<10, 15, 0x7bffu, false, 0x7c00u, 0x7e00u, 16>(f));
}
float softwareDecode(std::uint16_t h) { return tl::detail::decode_float<5, 10, 15, true, 16>(h); }

std::uint32_t bitsOf(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

void fail(const char* what, std::uint32_t input, std::uint32_t got, std::uint32_t want) {
    if (++failures <= 10) std::printf("FAIL %s: input 0x%08x gives 0x%08x, expected 0x%08x\n", what, input, got, want);
}

// The value of a half code from its fields (double precision), for the portable build.
double modelDecode(std::uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double sign = h >> 15 ? -1.0 : 1.0;
    if (e == 31) return m ? NAN : sign * INFINITY;
    return sign * (e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25));
}

} // namespace

int main() {
#ifdef TL_HALF_F16C
    if (!__builtin_cpu_supports("f16c")) {
        std::printf("skipped: this CPU has no F16C\n");
        return 77;
    }
#endif
    // Every half code decodes to the same float (NaN to a NaN).
    for (std::uint32_t h = 0; h < 65536; ++h) {
        tl::half code;
        code.bits = std::uint16_t(h);
        float got = float(code);
        float want = softwareDecode(std::uint16_t(h));
        if (std::isnan(want) ? !std::isnan(got) : bitsOf(got) != bitsOf(want)) fail("decode", h, bitsOf(got), bitsOf(want));
        double model = modelDecode(std::uint16_t(h));
        if (std::isnan(model) ? !std::isnan(want) : double(want) != model) fail("decode model", h, bitsOf(want), 0);
    }
    // Floats: every 97th bit pattern (all exponents, both signs, ties included by the stride's
    // low bits), plus each half code's value and the midpoints between neighbouring codes.
    auto checkEncode = [](float f) {
        std::uint16_t got = tl::half(f).bits, want = softwareEncode(f);
        if (std::isnan(f) ? (got & 0x7c00u) != 0x7c00u || !(got & 0x3ffu) : got != want)
            fail("encode", bitsOf(f), got, want);
    };
    for (std::uint64_t u = 0; u <= 0xffffffffull; u += 97) {
        float f;
        std::uint32_t bits = std::uint32_t(u);
        std::memcpy(&f, &bits, 4);
        checkEncode(f);
    }
    // Each finite code's value encodes to that code, and the midpoint of two neighbours (a tie,
    // exact in float) to the even one of them: in both builds, against the model.
    for (std::uint32_t h = 0; h < 0x7c00u; ++h) {
        double v = modelDecode(std::uint16_t(h)), next = modelDecode(std::uint16_t(h + 1));
        for (std::uint32_t sign : {0u, 0x8000u}) {
            double s = sign ? -1.0 : 1.0;
            checkEncode(float(s * v));
            checkEncode(float(s * (v + next) / 2));
            std::uint16_t exact = tl::half(float(s * v)).bits;
            if (exact != (h | sign)) fail("round trip", h | sign, exact, h | sign);
            std::uint16_t tie = tl::half(float(s * (v + next) / 2)).bits;
            std::uint16_t even = std::uint16_t(((h & 1u) ? h + 1 : h) | sign);
            if (tie != even) fail("tie to even", h | sign, tie, even);
        }
    }
    std::printf("%s: %d differences\n",
#ifdef TL_HALF_F16C
                "tl::half with F16C",
#else
                "tl::half in software",
#endif
                failures);
    return failures ? 1 : 0;
}

// Checks tl_types.h (tl::half, tl::bfloat16, tl::fp8_e4m3, tl::fp8_e5m2: the CPU's and HIP's
// storage types) against the CUDA toolkit's host conversions, which define the behaviour tlc's
// CUDA output has: every code decodes to the same float, and floats encode to the same code
// (a sweep over float bit patterns plus every midpoint between neighbouring codes).
// Build: g++ -std=c++17 -O2 -I/usr/local/cuda/include -I src/emit/runtime check_types.cpp
#include "tl_types.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

int failures = 0;

uint32_t bitsOf(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
float floatOf(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
bool sameFloat(float a, float b) { return (std::isnan(a) && std::isnan(b)) || bitsOf(a) == bitsOf(b); }

template <typename Ours, typename Theirs, typename Code>
void compare(const char* name, int bits) {
    auto ourCode = [](float f) {
        Ours o(f);
        Code c;
        std::memcpy(&c, &o, sizeof c);
        return c;
    };
    auto theirCode = [](float f) {
        Theirs t(f);
        Code c;
        std::memcpy(&c, &t, sizeof c);
        return c;
    };
    auto ourValue = [](Code c) {
        Ours o;
        std::memcpy(&o, &c, sizeof c);
        return float(o);
    };
    auto theirValue = [](Code c) {
        Theirs t;
        std::memcpy(static_cast<void*>(&t), &c, sizeof c);
        return float(t);
    };
    int bad = 0;
    auto fail = [&](const char* what, float f, unsigned ours, unsigned theirs) {
        if (bad++ < 5) std::printf("%s %s: %a (0x%08x): ours 0x%x, CUDA 0x%x\n", name, what, f, bitsOf(f), ours, theirs);
    };
    // Decoding: every code.
    const uint32_t codes = 1u << bits;
    std::vector<float> values(codes);
    for (uint32_t c = 0; c < codes; ++c) {
        values[c] = theirValue(Code(c));
        if (!sameFloat(ourValue(Code(c)), values[c])) fail("decode", values[c], bitsOf(ourValue(Code(c))), bitsOf(values[c]));
    }
    // Encoding: a sweep of float bit patterns, and the midpoints between neighbouring finite codes
    // and the floats just around them.
    auto encode = [&](float f) {
        Code ours = ourCode(f), theirs = theirCode(f);
        // NaN payloads may differ; NaN must stay NaN.
        bool same = std::isnan(f) ? std::isnan(ourValue(ours)) && std::isnan(theirValue(theirs)) : ours == theirs;
        if (!same) fail("encode", f, ours, theirs);
    };
    for (uint64_t u = 0; u <= 0xffffffffull; u += 0x101) encode(floatOf(uint32_t(u)));
    for (uint32_t c = 0; c + 1 < codes; ++c) {
        float a = values[c], b = values[c + 1];
        if (!std::isfinite(a) || !std::isfinite(b) || std::signbit(a) != std::signbit(b)) continue;
        float mid = (a + b) / 2;  // exact: the formats have far fewer mantissa bits than float
        encode(mid);
        encode(std::nextafter(mid, 0.0f));
        encode(std::nextafter(mid, INFINITY));
        encode(std::nextafter(mid, -INFINITY));
    }
    for (float f : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-30f, -1e-30f, 1e30f, -1e30f, 65504.0f, 65520.0f, 448.0f,
                    464.0f, 465.0f, 57344.0f, 61440.0f, 61441.0f})
        encode(f);
    if (bad) {
        std::printf("%s: %d mismatches\n", name, bad);
        ++failures;
    } else {
        std::printf("%s: matches CUDA\n", name);
    }
}

} // namespace

int main() {
    compare<tl::half, __half, uint16_t>("half", 16);
    compare<tl::bfloat16, __nv_bfloat16, uint16_t>("bfloat16", 16);
    compare<tl::fp8_e4m3, __nv_fp8_e4m3, uint8_t>("fp8_e4m3", 8);
    compare<tl::fp8_e5m2, __nv_fp8_e5m2, uint8_t>("fp8_e5m2", 8);
    return failures ? 1 : 0;
}

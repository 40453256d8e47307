// The MFMA builtins of CDNA2/CDNA3 (__builtin_amdgcn_mfma_*), emulated for the SIMT simulator:
// each lane passes its registers, and when the whole 64-lane wave has, the 16 x 16 x K product
// is computed in double (64-bit integers for i8) from the operands' positions and written back
// to every lane. The runtime's mfma section (tl_hip_mfma.h) runs as it is on top of these, so its
// packing and its fp8 conversion are checked too.
//
// Layouts (AMD matrix instruction calculator; CDNA3 ISA, "Matrix Arithmetic Instructions"):
// lane l holds A[l % 16][K/4 * (l / 16) + i] and B[K/4 * (l / 16) + i][l % 16] for i < K/4, and
// D[4 * (l / 16) + i][l % 16] for i < 4. fp8 is read as CDNA3 reads it: FNUZ (bias 8 for fp8,
// 16 for bf8, 0x80 the only NaN).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

namespace simt_mfma {
typedef _Float16 f16x4 __attribute__((vector_size(8)));
typedef short i16x4 __attribute__((vector_size(8)));
typedef float f32x4 __attribute__((vector_size(16)));
typedef int i32x4 __attribute__((vector_size(16)));

template <typename W> struct Lane {
    W a[8], b[8], c[4], d[4];
};

// D = A B + C over the wave, in W (double or long long).
template <int K, typename W> void multiply(void** lanes, int count) {
    if (count != 64) {
        std::fprintf(stderr, "simt: v_mfma with %d of 64 lanes\n", count);
        std::abort();
    }
    constexpr int P = K / 4;
    W A[16][K], B[K][16], C[16][16];
    for (int lane = 0; lane < 64; ++lane) {
        const auto& l = *static_cast<Lane<W>*>(lanes[lane]);
        for (int i = 0; i < P; ++i) {
            A[lane % 16][P * (lane / 16) + i] = l.a[i];
            B[P * (lane / 16) + i][lane % 16] = l.b[i];
        }
        for (int i = 0; i < 4; ++i) C[4 * (lane / 16) + i][lane % 16] = l.c[i];
    }
    for (int lane = 0; lane < 64; ++lane) {
        auto& l = *static_cast<Lane<W>*>(lanes[lane]);
        for (int i = 0; i < 4; ++i) {
            int row = 4 * (lane / 16) + i, col = lane % 16;
            W sum = C[row][col];
            for (int k = 0; k < K; ++k) sum += A[row][k] * B[k][col];
            l.d[i] = sum;
        }
    }
}

template <int K, typename W> Lane<W> run(Lane<W> lane) {
    ::simt::warpCollective(&lane, multiply<K, W>);
    return lane;
}

inline double bf16(unsigned short bits) { return ::simt::decode<8, 7>(bits); }
// FNUZ fp8: E exponent bits, M mantissa bits, bias 2^(E-1); 0x80 is NaN.
template <int E, int M> double fnuz(unsigned char bits) {
    if (bits == 0x80) return std::numeric_limits<double>::quiet_NaN();
    const int bias = 1 << (E - 1);
    int exponent = bits >> M & ((1 << E) - 1), mantissa = bits & ((1 << M) - 1);
    double v = exponent == 0 ? std::ldexp(mantissa, 1 - bias - M) : std::ldexp((1 << M) + mantissa, exponent - bias - M);
    return bits & 0x80 ? -v : v;
}
template <typename W, typename V> void accumulators(Lane<W>& l, const V& c) {
    for (int i = 0; i < 4; ++i) l.c[i] = W(c[i]);
}
inline f32x4 floats(const Lane<double>& l) { return f32x4{float(l.d[0]), float(l.d[1]), float(l.d[2]), float(l.d[3])}; }
// i32 accumulators wrap as the hardware's do (the low 32 bits).
inline i32x4 ints(const Lane<long long>& l) {
    i32x4 out;
    for (int i = 0; i < 4; ++i) out[i] = int(std::uint32_t(std::uint64_t(l.d[i])));
    return out;
}
template <int E, int M, int E2, int M2> f32x4 fp8(long a, long b, f32x4 c) {
    Lane<double> l{};
    for (int i = 0; i < 8; ++i) {
        l.a[i] = fnuz<E, M>(std::uint64_t(a) >> (8 * i) & 0xff);
        l.b[i] = fnuz<E2, M2>(std::uint64_t(b) >> (8 * i) & 0xff);
    }
    accumulators(l, c);
    return floats(run<32>(l));
}
} // namespace simt_mfma

inline simt_mfma::f32x4 __builtin_amdgcn_mfma_f32_16x16x16f16(simt_mfma::f16x4 a, simt_mfma::f16x4 b,
                                                              simt_mfma::f32x4 c, int, int, int) {
    simt_mfma::Lane<double> l{};
    for (int i = 0; i < 4; ++i) l.a[i] = double(a[i]), l.b[i] = double(b[i]);
    simt_mfma::accumulators(l, c);
    return simt_mfma::floats(simt_mfma::run<16>(l));
}
inline simt_mfma::f32x4 __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(simt_mfma::i16x4 a, simt_mfma::i16x4 b,
                                                                  simt_mfma::f32x4 c, int, int, int) {
    simt_mfma::Lane<double> l{};
    for (int i = 0; i < 4; ++i) {
        l.a[i] = simt_mfma::bf16(static_cast<unsigned short>(a[i]));
        l.b[i] = simt_mfma::bf16(static_cast<unsigned short>(b[i]));
    }
    simt_mfma::accumulators(l, c);
    return simt_mfma::floats(simt_mfma::run<16>(l));
}
inline simt_mfma::f32x4 __builtin_amdgcn_mfma_f32_16x16x4f32(float a, float b, simt_mfma::f32x4 c, int, int, int) {
    simt_mfma::Lane<double> l{};
    l.a[0] = a, l.b[0] = b;
    simt_mfma::accumulators(l, c);
    return simt_mfma::floats(simt_mfma::run<4>(l));
}
inline simt_mfma::i32x4 __builtin_amdgcn_mfma_i32_16x16x16i8(int a, int b, simt_mfma::i32x4 c, int, int, int) {
    simt_mfma::Lane<long long> l{};
    for (int i = 0; i < 4; ++i) l.a[i] = std::int8_t(a >> (8 * i)), l.b[i] = std::int8_t(b >> (8 * i));
    simt_mfma::accumulators(l, c);
    return simt_mfma::ints(simt_mfma::run<16>(l));
}
inline simt_mfma::i32x4 __builtin_amdgcn_mfma_i32_16x16x32_i8(long a, long b, simt_mfma::i32x4 c, int, int, int) {
    simt_mfma::Lane<long long> l{};
    for (int i = 0; i < 8; ++i) l.a[i] = std::int8_t(a >> (8 * i)), l.b[i] = std::int8_t(b >> (8 * i));
    simt_mfma::accumulators(l, c);
    return simt_mfma::ints(simt_mfma::run<32>(l));
}
inline simt_mfma::f32x4 __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(long a, long b, simt_mfma::f32x4 c, int, int, int) {
    return simt_mfma::fp8<4, 3, 4, 3>(a, b, c);
}
inline simt_mfma::f32x4 __builtin_amdgcn_mfma_f32_16x16x32_fp8_bf8(long a, long b, simt_mfma::f32x4 c, int, int, int) {
    return simt_mfma::fp8<4, 3, 5, 2>(a, b, c);
}
inline simt_mfma::f32x4 __builtin_amdgcn_mfma_f32_16x16x32_bf8_fp8(long a, long b, simt_mfma::f32x4 c, int, int, int) {
    return simt_mfma::fp8<5, 2, 4, 3>(a, b, c);
}
inline simt_mfma::f32x4 __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8(long a, long b, simt_mfma::f32x4 c, int, int, int) {
    return simt_mfma::fp8<5, 2, 5, 2>(a, b, c);
}

// Checks the MFMA helpers of tl_hip_mfma.h (sections mfma, mfma_i8_cdna2/3, mfma_fp8) that the
// gfx90a / gfx942 gemm lowering calls: one 64-lane wave loads random 16 x K and K x 16 tiles in
// the instructions' register layout (written out here from the AMD matrix instruction
// calculator, independently of the lowering), runs each helper once and compares D = A B + C
// with references in double (exact integers for i8, wrapping as the hardware does).
//
// Built two ways:
//  * as C++ against the SIMT simulator's stand-in headers (tests/simt/include), whose
//    __builtin_amdgcn_mfma_* emulate the instructions (fp8 read as CDNA3's FNUZ): CTest
//    simt-mfma runs it, checking the helpers' packing and their OCP -> FNUZ conversion (-0,
//    subnormals, the largest codes, NaN, e5m2 infinities) together with the emulation the
//    run layer (run-*-gfx90a) relies on;
//  * by hipcc for gfx90a and gfx940, assembly only (CTest gcn-mfma-*): every helper compiles
//    warning-free into its v_mfma instruction without scratch. No AMD GPU is lent to run it.
#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>

#include "tl_hip_mfma.h"
#ifdef __HIP__
#include "tl_types.h"
#else
// The sections emitted code would carry (the whole header clashes with the stand-ins' types).
#include "tl_common.h"
#include "tl_types_fp8.h"  // tl_types.h: small_float, fp8_e4m3, fp8_e5m2
#endif

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

// hipcc builds for one architecture at a time: TLC_CDNA3 (gfx940) leaves out CDNA2's i8 form,
// its absence (gfx90a) CDNA3's i8 and fp8 forms. The simulator runs them all.
#if !defined(__HIP__)
#define TLC_CDNA2_FORMS 1
#define TLC_CDNA3_FORMS 1
#elif defined(TLC_CDNA3)
#define TLC_CDNA2_FORMS 0
#define TLC_CDNA3_FORMS 1
#else
#define TLC_CDNA2_FORMS 1
#define TLC_CDNA3_FORMS 0
#endif

namespace {

// ---- the forms, as the lowering calls them -----------------------------------------------------
template <typename AccT, typename AT, typename BT, int KK, void (*Helper)(AccT*, const AT*, const BT*)> struct Form {
    using Acc = AccT;
    using A = AT;
    using B = BT;
    static constexpr int K = KK;
    static __device__ void run(Acc* c, const A* a, const B* b) { Helper(c, a, b); }
};
using F16 = Form<float, __half, __half, 16, tl::mfma_f32_16x16x16_f16>;
using F16Out = Form<__half, __half, __half, 16, tl::mfma_f16_16x16x16_f16>;
using BF16 = Form<float, hip_bfloat16, hip_bfloat16, 16, tl::mfma_f32_16x16x16_bf16>;
using F32 = Form<float, float, float, 4, tl::mfma_f32_16x16x4_f32>;
#if TLC_CDNA2_FORMS
using I8K16 = Form<int, int8_t, int8_t, 16, tl::mfma_i32_16x16x16_i8>;
#endif
#if TLC_CDNA3_FORMS
using I8K32 = Form<int, int8_t, int8_t, 32, tl::mfma_i32_16x16x32_i8>;
template <typename TA, typename TB> struct Fp8Helper;
template <> struct Fp8Helper<tl::fp8_e4m3, tl::fp8_e4m3> {
    static constexpr auto fn = tl::mfma_f32_16x16x32_e4m3<tl::fp8_e4m3, tl::fp8_e4m3>;
};
template <> struct Fp8Helper<tl::fp8_e5m2, tl::fp8_e5m2> {
    static constexpr auto fn = tl::mfma_f32_16x16x32_e5m2<tl::fp8_e5m2, tl::fp8_e5m2>;
};
template <> struct Fp8Helper<tl::fp8_e4m3, tl::fp8_e5m2> {
    static constexpr auto fn = tl::mfma_f32_16x16x32_e4m3_e5m2<tl::fp8_e4m3, tl::fp8_e5m2>;
};
template <> struct Fp8Helper<tl::fp8_e5m2, tl::fp8_e4m3> {
    static constexpr auto fn = tl::mfma_f32_16x16x32_e5m2_e4m3<tl::fp8_e5m2, tl::fp8_e4m3>;
};
template <typename TA, typename TB> using Fp8 = Form<float, TA, TB, 32, Fp8Helper<TA, TB>::fn>;
#endif

// One wave: lane l holds A[l % 16][P * (l / 16) + i] and B[P * (l / 16) + i][l % 16] (P = K / 4)
// and C / D[4 * (l / 16) + i][l % 16]. A is 16 x K and B K x 16, row-major; C and D 16 x 16.
template <typename Form>
__global__ void oneTile(const typename Form::A* A, const typename Form::B* B, const typename Form::Acc* C,
                        typename Form::Acc* D) {
    constexpr int K = Form::K, P = K / 4;
    const int lane = threadIdx.x;
    alignas(16) typename Form::A a[P];
    alignas(16) typename Form::B b[P];
    alignas(16) typename Form::Acc c[4];
    for (int i = 0; i < P; ++i) {
        a[i] = A[(lane % 16) * K + P * (lane / 16) + i];
        b[i] = B[(P * (lane / 16) + i) * 16 + lane % 16];
    }
    for (int i = 0; i < 4; ++i) c[i] = C[(4 * (lane / 16) + i) * 16 + lane % 16];
    Form::run(c, a, b);
    for (int i = 0; i < 4; ++i) D[(4 * (lane / 16) + i) * 16 + lane % 16] = c[i];
}

// ---- host side ---------------------------------------------------------------------------------
int failures = 0, passes = 0;

void report(const std::string& what, int bad) {
    if (bad) {
        std::printf("FAIL %s: %d of 256 elements differ\n", what.c_str(), bad);
        ++failures;
    } else {
        std::printf("ok   %s\n", what.c_str());
        ++passes;
    }
}

template <typename T> double toDouble(T v) {
    if constexpr (std::is_integral_v<T>) return double(v);
    else return double(float(v));
}

// Random values of each type: i8 over its whole range, fp8 as any code but NaN (and e5m2's
// infinities), the others uniform in [-2, 2).
template <typename T> std::vector<T> random(size_t n, std::mt19937& gen) {
    std::vector<T> out(n);
    std::uniform_int_distribution<int> bytes(0, 255);
    std::uniform_real_distribution<float> reals(-2.0f, 2.0f);
    for (auto& v : out) {
        if constexpr (std::is_same_v<T, tl::fp8_e4m3> || std::is_same_v<T, tl::fp8_e5m2>) {
            constexpr int special = std::is_same_v<T, tl::fp8_e4m3> ? 0x7f : 0x7c;  // NaN (and inf) from here up
            do v.bits = std::uint8_t(bytes(gen));
            while ((v.bits & 0x7f) >= special);
        } else if constexpr (std::is_integral_v<T>) {
            v = T(bytes(gen) - 128);
        } else {
            v = T(reals(gen));
        }
    }
    return out;
}

template <typename... Params, typename... Args> void launch(void (*kernel)(Params...), Args... args) {
#ifdef __HIP__
    hipLaunchKernelGGL(kernel, dim3(1), dim3(64), 0, 0, args...);
    (void)hipDeviceSynchronize();
#else
    ::simt::launch<64>(kernel, dim3(1), dim3(64), 0, nullptr, args...);
#endif
}

// Runs one tile of Form on A, B, C (host memory: the simulator's device memory is the host's)
// and compares D with C + A B in double: within `rtol` of the sum of the terms' magnitudes, or
// exactly (mod 2^32) for i32; NaN where the reference is NaN.
template <typename Form>
void tileCase(const std::string& what, const std::vector<typename Form::A>& A, const std::vector<typename Form::B>& B,
              const std::vector<typename Form::Acc>& C, double rtol) {
    constexpr int K = Form::K;
    std::vector<typename Form::Acc> D(256, typename Form::Acc(-7));
    launch(oneTile<Form>, A.data(), B.data(), C.data(), D.data());
    int bad = 0;
    for (int m = 0; m < 16; ++m)
        for (int n = 0; n < 16; ++n) {
            double want = toDouble(C[m * 16 + n]), scale = std::fabs(want);
            for (int k = 0; k < K; ++k) {
                double term = toDouble(A[m * K + k]) * toDouble(B[k * 16 + n]);
                want += term;
                scale += std::fabs(term);
            }
            double got = toDouble(D[m * 16 + n]);
            bool ok;
            if constexpr (std::is_integral_v<typename Form::Acc>)
                ok = std::int32_t(std::uint32_t(std::int64_t(want))) == D[m * 16 + n];
            else if (std::isnan(want)) ok = std::isnan(got);
            else ok = std::fabs(got - want) <= rtol * scale + 1e-30;
            if (!ok && bad++ < 5) std::printf("  %s: D[%d][%d] = %.9g, expected %.9g\n", what.c_str(), m, n, got, want);
        }
    report(what, bad);
}

template <typename Form> void randomCase(const std::string& what, uint32_t seed, double rtol) {
    std::mt19937 gen(seed);
    auto A = random<typename Form::A>(16 * Form::K, gen);
    auto B = random<typename Form::B>(Form::K * 16, gen);
    auto C = random<typename Form::Acc>(256, gen);
    if constexpr (std::is_integral_v<typename Form::Acc>)
        for (int i = 0; i < 256; i += 17) C[i] = 2147483647 - i;  // sums past 2^31 wrap
    tileCase<Form>(what, A, B, C, rtol);
}

#if TLC_CDNA3_FORMS
// fp8 codes the conversion must map: -0 (0x80) everywhere in row 0 of A (FNUZ's NaN if passed
// through), a NaN in A[3][5] (row 3 of D is NaN), and for e5m2 an infinity in B[2][7] (column 7
// of D is NaN: FNUZ has no infinity; documented in tl_hip_mfma.h).
template <typename TA, typename TB> void specialCodes(const std::string& what, uint32_t seed) {
    using Form = Fp8<TA, TB>;
    std::mt19937 gen(seed);
    auto A = random<TA>(16 * 32, gen);
    auto B = random<TB>(32 * 16, gen);
    auto C = random<float>(256, gen);
    for (int k = 0; k < 32; ++k) A[k].bits = 0x80;
    A[3 * 32 + 5].bits = std::is_same_v<TA, tl::fp8_e4m3> ? 0x7f : 0x7e;
    if constexpr (std::is_same_v<TB, tl::fp8_e5m2>) B[2 * 16 + 7].bits = 0x7c;  // +inf
    std::vector<float> D(256, -7.0f);
    launch(oneTile<Form>, A.data(), B.data(), C.data(), D.data());
    int bad = 0;
    for (int m = 0; m < 16; ++m)
        for (int n = 0; n < 16; ++n) {
            bool nanRow = m == 3, nanCol = std::is_same_v<TB, tl::fp8_e5m2> && n == 7;
            double want = C[m * 16 + n], scale = std::fabs(want);
            for (int k = 0; k < 32; ++k) {
                double term = toDouble(A[m * 32 + k]) * toDouble(B[k * 16 + n]);
                if (!std::isnan(term) && !std::isinf(term)) want += term, scale += std::fabs(term);
            }
            double got = D[m * 16 + n];
            bool ok = nanRow || nanCol ? std::isnan(got) : std::fabs(got - want) <= 1e-6 * scale;
            if (!ok && bad++ < 5) std::printf("  %s: D[%d][%d] = %.9g, expected %s\n", what.c_str(), m, n, got,
                                              nanRow || nanCol ? "NaN" : std::to_string(want).c_str());
        }
    report(what, bad);
}
#endif

} // namespace

int main() {
#ifdef __HIP__
    std::printf("skip: hipcc builds this file for its assembly only\n");
    if (passes == 0) return 0;  // (never true: the cases below only have to compile)
#endif
    randomCase<F16>("mfma_f32_16x16x16_f16", 1, 1e-6);
    randomCase<F16Out>("mfma_f16_16x16x16_f16 (rounded to f16 once)", 2, 1e-3);
    randomCase<BF16>("mfma_f32_16x16x16_bf16", 3, 1e-6);
    randomCase<F32>("mfma_f32_16x16x4_f32", 4, 1e-6);
#if TLC_CDNA2_FORMS
    randomCase<I8K16>("mfma_i32_16x16x16_i8 (CDNA2)", 5, 0);
#endif
#if TLC_CDNA3_FORMS
    randomCase<I8K32>("mfma_i32_16x16x32_i8 (CDNA3)", 6, 0);
    randomCase<Fp8<tl::fp8_e4m3, tl::fp8_e4m3>>("mfma_f32_16x16x32_e4m3 (every finite code)", 7, 1e-6);
    randomCase<Fp8<tl::fp8_e5m2, tl::fp8_e5m2>>("mfma_f32_16x16x32_e5m2 (every finite code)", 8, 1e-6);
    randomCase<Fp8<tl::fp8_e4m3, tl::fp8_e5m2>>("mfma_f32_16x16x32_e4m3_e5m2", 9, 1e-6);
    randomCase<Fp8<tl::fp8_e5m2, tl::fp8_e4m3>>("mfma_f32_16x16x32_e5m2_e4m3", 10, 1e-6);
    specialCodes<tl::fp8_e4m3, tl::fp8_e4m3>("e4m3 -0 and NaN codes", 11);
    specialCodes<tl::fp8_e5m2, tl::fp8_e5m2>("e5m2 -0, NaN and infinity codes", 12);
    specialCodes<tl::fp8_e4m3, tl::fp8_e5m2>("e4m3 x e5m2 special codes", 13);
#endif
    std::printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}

// Checks the warp-wide instruction helpers of tl_cuda_mma.h (sections ldmatrix and mma) that the
// tensor-core gemm lowering combines: ldmatrix loads 8x8 tiles from shared memory into the
// registers of the mma fragments, so the register layout of ldmatrix and the fragment layouts
// of mma.sync must agree for every way the operands are stored. One warp, random inputs,
// references in double (or exact integers).
//
// Built two ways:
//  * as C++ against the SIMT simulator's stand-in headers (tests/simt/include): CTest
//    simt-instructions runs it and so checks the simulator's emulation of the helpers, which the
//    run layer (run-*-sm80) relies on;
//  * by nvcc against the real tl_cuda_mma.h (CTest ptx-instructions-sm80 / -sm89): every helper
//    compiles warning-free and its instruction appears in the PTX; on a machine with a GPU the
//    same binary runs the same checks on the hardware (fp8 needs sm_89).
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#ifdef __CUDACC__
#include "tl_cuda_mma.h"
#endif

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "test_support.h"

namespace {

// ---- device side ------------------------------------------------------------------------------

__device__ __forceinline__ void mma(float* c, const __half* a, const __half* b) { tl::mma_m16n8k16_f32_f16(c, a, b); }
__device__ __forceinline__ void mma(float* c, const __nv_bfloat16* a, const __nv_bfloat16* b) {
    tl::mma_m16n8k16_f32_bf16(c, a, b);
}
__device__ __forceinline__ void mma(__half* c, const __half* a, const __half* b) { tl::mma_m16n8k16_f16_f16(c, a, b); }
__device__ __forceinline__ void mma(int* c, const int8_t* a, const int8_t* b) { tl::mma_m16n8k32_s32_s8(c, a, b); }
__device__ __forceinline__ void mma(float* c, const __nv_fp8_e4m3* a, const __nv_fp8_e4m3* b) {
    tl::mma_m16n8k32_f32_e4m3(c, a, b);
}
__device__ __forceinline__ void mma(float* c, const __nv_fp8_e5m2* a, const __nv_fp8_e5m2* b) {
    tl::mma_m16n8k32_f32_e5m2(c, a, b);
}
__device__ __forceinline__ void mma(float* c, const __nv_fp8_e4m3* a, const __nv_fp8_e5m2* b) {
    tl::mma_m16n8k32_f32_e4m3_e5m2(c, a, b);
}
__device__ __forceinline__ void mma(float* c, const __nv_fp8_e5m2* a, const __nv_fp8_e4m3* b) {
    tl::mma_m16n8k32_f32_e5m2_e4m3(c, a, b);
}

// Loads the accumulators of the lane (C / D fragment: element i at row g + 8 * (i / 2), column
// 2 * t + i % 2 of the 16 x 8 tile, lane = 4 * g + t), runs the mma and stores them back.
template <typename Acc, typename InA, typename InB>
__device__ void accumulate(const InA* a, const InB* b, const Acc* C, Acc* D) {
    const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
    Acc c[4];
    for (int i = 0; i < 4; ++i) c[i] = C[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2];
    mma(c, a, b);
    for (int i = 0; i < 4; ++i) D[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = c[i];
}

// m16n8k16 with 16-bit inputs. A (16 x 16, M x K) is stored [M][K] or, when ATransposed, [K][M];
// B (16 x 8, K x N) is stored [K][N] or, when BTransposed, [N][K].
template <typename Acc, typename In, bool ATransposed, bool BTransposed>
__global__ void mmaK16(const In* A, const In* B, const Acc* C, Acc* D) {
    __shared__ __align__(16) unsigned char smem[(16 * 16 + 16 * 8) * 2];
    In* As = reinterpret_cast<In*>(smem);
    In* Bs = As + 16 * 16;
    const int lane = threadIdx.x;
    for (int i = lane; i < 16 * 16; i += 32) As[i] = A[i];
    for (int i = lane; i < 16 * 8; i += 32) Bs[i] = B[i];
    __syncthreads();
    // Lane 8 * mat + r addresses row r of 8x8 matrix mat. The A fragment's four matrices are
    // a[0..1] (M 0-7, K 0-7), a[2..3] (M 8-15, K 0-7), a[4..5] (M 0-7, K 8-15), a[6..7] (M 8-15,
    // K 8-15); B's two are b[0..1] (K 0-7) and b[2..3] (K 8-15).
    const int mat = lane / 8, r = lane % 8;
    __align__(16) In a[8];
    __align__(16) In b[4];
    if constexpr (!ATransposed) tl::ldmatrix_x4(a, As + (r + 8 * (mat % 2)) * 16 + 8 * (mat / 2));
    else tl::ldmatrix_x4_trans(a, As + (r + 8 * (mat / 2)) * 16 + 8 * (mat % 2));
    if constexpr (!BTransposed) tl::ldmatrix_x2_trans(b, Bs + (lane % 16) * 8);
    else tl::ldmatrix_x2(b, Bs + (lane % 8) * 16 + 8 * (mat % 2));
    accumulate(a, b, C, D);
}

// m16n8k32 with 8-bit inputs (A of InA, B of InB): A (16 x 32) stored [M][K], B (32 x 8) stored
// [N][K] (ldmatrix's .trans moves 16-bit elements, so 8-bit operands are loaded K-contiguous).
// A's four matrices (8 rows of 16 bytes) are a[0..3] (M 0-7, K 0-15), a[4..7] (M 8-15, K 0-15),
// a[8..11] (M 0-7, K 16-31), a[12..15] (M 8-15, K 16-31); B's two are b[0..3] (K 0-15) and
// b[4..7] (K 16-31).
template <typename Acc, typename InA, typename InB>
__global__ void mmaK32(const InA* A, const InB* B, const Acc* C, Acc* D) {
    __shared__ __align__(16) unsigned char smem[16 * 32 + 8 * 32];
    InA* As = reinterpret_cast<InA*>(smem);
    InB* Bs = reinterpret_cast<InB*>(smem + 16 * 32);
    const int lane = threadIdx.x;
    for (int i = lane; i < 16 * 32; i += 32) As[i] = A[i];
    for (int i = lane; i < 8 * 32; i += 32) Bs[i] = B[i];
    __syncthreads();
    const int mat = lane / 8, r = lane % 8;
    __align__(16) InA a[16];
    __align__(16) InB b[8];
    tl::ldmatrix_x4(a, As + (r + 8 * (mat % 2)) * 32 + 16 * (mat / 2));
    tl::ldmatrix_x2(b, Bs + (lane % 8) * 32 + 16 * (mat % 2));
    accumulate(a, b, C, D);
}

// Where row r of matrix i (8 elements of 16 bits) lies in ldmatrixLayout's shared memory, in rows
// of 16 bytes: scattered, so that the test sees which address each lane gives.
__host__ __device__ int rowSlot(int i, int r) { return (5 * (8 * i + r) + 3) % 32; }

// ldmatrix on its own: Count 8x8 matrices M[i][row][col] (16-bit), each lane's registers to
// out[4 * lane + i]. Lanes past the last matrix give the address of row 0 of matrix 0.
template <int Count, bool Trans>
__global__ void ldmatrixLayout(const unsigned short* M, unsigned* out) {
    __shared__ __align__(16) unsigned short smem[32 * 8];
    const int lane = threadIdx.x;
    for (int e = lane; e < 4 * 64; e += 32) smem[rowSlot(e / 64, e / 8 % 8) * 8 + e % 8] = M[e];
    __syncthreads();
    const int mat = lane / 8 < Count ? lane / 8 : 0, row = lane / 8 < Count ? lane % 8 : 0;
    const unsigned short* src = smem + rowSlot(mat, row) * 8;
    __align__(16) unsigned regs[4] = {0u, 0u, 0u, 0u};
    if constexpr (Count == 1 && !Trans) tl::ldmatrix_x1(regs, src);
    if constexpr (Count == 2 && !Trans) tl::ldmatrix_x2(regs, src);
    if constexpr (Count == 4 && !Trans) tl::ldmatrix_x4(regs, src);
    if constexpr (Count == 1 && Trans) tl::ldmatrix_x1_trans(regs, src);
    if constexpr (Count == 2 && Trans) tl::ldmatrix_x2_trans(regs, src);
    if constexpr (Count == 4 && Trans) tl::ldmatrix_x4_trans(regs, src);
    for (int i = 0; i < 4; ++i) out[4 * lane + i] = regs[i];
}

// ---- host side --------------------------------------------------------------------------------

template <typename T> double toDouble(T v) {
    if constexpr (std::is_arithmetic_v<T>) return double(v);
    else return double(float(v));
}

// Random values: integers in [-128, 127] for int8_t; otherwise uniform in [-2, 2), or multiples
// of 1/4 there when `quarters` (f16 sums of their products are then exact).
template <typename T> std::vector<T> random(size_t n, std::mt19937& gen, bool quarters = false) {
    std::vector<T> out;
    out.reserve(n);
    std::uniform_int_distribution<int> bytes(-128, 127), steps(-8, 8);
    std::uniform_real_distribution<float> reals(-2.0f, 2.0f);
    for (size_t i = 0; i < n; ++i) {
        if constexpr (std::is_integral_v<T>) out.push_back(T(bytes(gen)));
        else out.push_back(T(quarters ? float(steps(gen)) / 4.0f : reals(gen)));
    }
    return out;
}

template <typename T>
void check(const std::string& what, const std::vector<T>& got, const std::vector<double>& want, double atol,
           double rtol) {
    int bad = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        double g = toDouble(got[i]);
        if (!(std::fabs(g - want[i]) <= atol + rtol * std::fabs(want[i]))) {
            if (bad < 5) std::printf("  %s: element %zu (row %zu, col %zu) = %.8g, expected %.8g\n", what.c_str(), i,
                                     i / 8, i % 8, g, want[i]);
            ++bad;
        }
    }
    if (bad) {
        std::printf("FAIL %s: %d of %zu elements differ\n", what.c_str(), bad, want.size());
        ++failures;
    } else {
        std::printf("ok   %s\n", what.c_str());
        ++passes;
    }
}

// D = A * B + C for a 16 x K A, K x 8 B, both given row-major in their logical shape; stores A
// and B as the kernel expects, runs it and compares.
template <int K, typename Acc, typename In, bool ATransposed, bool BTransposed, typename InB = In>
void mmaCase(const std::string& what, uint32_t seed, double atol, double rtol, bool quarters = false) {
    std::mt19937 gen(seed);
    std::vector<In> A = random<In>(16 * K, gen, quarters);
    std::vector<InB> B = random<InB>(K * 8, gen, quarters);
    std::vector<Acc> C = random<Acc>(16 * 8, gen, quarters);
    std::vector<double> want(16 * 8);
    for (int m = 0; m < 16; ++m)
        for (int n = 0; n < 8; ++n) {
            double sum = toDouble(C[m * 8 + n]);
            for (int k = 0; k < K; ++k) sum += toDouble(A[m * K + k]) * toDouble(B[k * 8 + n]);
            want[m * 8 + n] = sum;
        }
    std::vector<In> storedA(A.size());
    std::vector<InB> storedB(B.size());
    for (int m = 0; m < 16; ++m)
        for (int k = 0; k < K; ++k) storedA[ATransposed ? k * 16 + m : m * K + k] = A[m * K + k];
    for (int k = 0; k < K; ++k)
        for (int n = 0; n < 8; ++n) storedB[BTransposed ? n * K + k : k * 8 + n] = B[k * 8 + n];
    Buffer<In> dA(storedA);
    Buffer<InB> dB(storedB);
    Buffer<Acc> dC(C), dD(std::vector<Acc>(16 * 8, Acc(-7)));
    bool launched;
    if constexpr (K == 16)
        launched = launch(32, mmaK16<Acc, In, ATransposed, BTransposed>, dA.get(), dB.get(), dC.get(), dD.get());
    else launched = launch(32, mmaK32<Acc, In, InB>, dA.get(), dB.get(), dC.get(), dD.get());
    if (launched) check(what, dD.read(), want, atol, rtol);
}

template <int Count, bool Trans> void ldmatrixCase(const std::string& what, uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_int_distribution<int> values(0, 0xffff);
    std::vector<unsigned short> M(4 * 64);
    for (auto& v : M) v = static_cast<unsigned short>(values(gen));
    Buffer<unsigned short> dM(M);
    Buffer<unsigned> dOut(std::vector<unsigned>(32 * 4, 0xdeadbeefu));
    if (!launch(32, ldmatrixLayout<Count, Trans>, dM.get(), dOut.get())) return;
    std::vector<unsigned> out = dOut.read();
    std::vector<double> got, want;
    for (int lane = 0; lane < 32; ++lane)
        for (int i = 0; i < Count; ++i) {
            // PTX ISA, "ldmatrix": lane l holds (row l / 4, elements 2 (l % 4), +1) of each matrix,
            // or with .trans (elements 2 (l % 4), +1 of column l / 4).
            int row = lane / 4, col = 2 * (lane % 4);
            auto at = [&](int r, int c) { return unsigned(M[i * 64 + r * 8 + c]); };
            unsigned lo = Trans ? at(col, row) : at(row, col), hi = Trans ? at(col + 1, row) : at(row, col + 1);
            want.push_back(double(lo | hi << 16));
            got.push_back(double(out[4 * lane + i]));
        }
    check(what, got, want, 0, 0);
}

} // namespace

int main() {
#ifdef __CUDACC__
    cudaDeviceProp prop;
    if (!firstDevice(prop)) return 0;
    const bool fp8 = prop.major * 10 + prop.minor >= 89;
#else
    const bool fp8 = true;
#endif
    ldmatrixCase<1, false>("ldmatrix .x1", 1);
    ldmatrixCase<2, false>("ldmatrix .x2", 2);
    ldmatrixCase<4, false>("ldmatrix .x4", 3);
    ldmatrixCase<1, true>("ldmatrix .x1.trans", 4);
    ldmatrixCase<2, true>("ldmatrix .x2.trans", 5);
    ldmatrixCase<4, true>("ldmatrix .x4.trans", 6);

    // f32 accumulation: float sums of exact products; the hardware may round differently.
    const double f32tol = 2e-4;
    mmaCase<16, float, __half, false, false>("m16n8k16 f32.f16, A [M][K], B [K][N]", 11, f32tol, f32tol);
    mmaCase<16, float, __half, false, true>("m16n8k16 f32.f16, A [M][K], B [N][K]", 12, f32tol, f32tol);
    mmaCase<16, float, __half, true, false>("m16n8k16 f32.f16, A [K][M], B [K][N]", 13, f32tol, f32tol);
    mmaCase<16, float, __half, true, true>("m16n8k16 f32.f16, A [K][M], B [N][K]", 14, f32tol, f32tol);
    mmaCase<16, float, __nv_bfloat16, false, false>("m16n8k16 f32.bf16, A [M][K], B [K][N]", 15, f32tol, f32tol);
    mmaCase<16, float, __nv_bfloat16, true, true>("m16n8k16 f32.bf16, A [K][M], B [N][K]", 16, f32tol, f32tol);
    // f16 accumulation on multiples of 1/4 in [-2, 2]: every partial sum is exact in f16.
    mmaCase<16, __half, __half, false, false>("m16n8k16 f16.f16, A [M][K], B [K][N]", 21, 0, 0, true);
    mmaCase<16, __half, __half, false, true>("m16n8k16 f16.f16, A [M][K], B [N][K]", 22, 0, 0, true);
    mmaCase<16, __half, __half, true, false>("m16n8k16 f16.f16, A [K][M], B [K][N]", 23, 0, 0, true);
    mmaCase<16, __half, __half, true, true>("m16n8k16 f16.f16, A [K][M], B [N][K]", 24, 0, 0, true);
    // and on random values, rounded to f16 at the end (and maybe along the way on hardware).
    mmaCase<16, __half, __half, false, true>("m16n8k16 f16.f16 random, A [M][K], B [N][K]", 25, 2e-2, 4e-3);
    mmaCase<32, int, int8_t, false, true>("m16n8k32 s32.s8, A [M][K], B [N][K]", 31, 0, 0);
    if (fp8) {
        // fp8 products are exact in f32; the tensor cores' fp8 accumulation may keep fewer bits.
        mmaCase<32, float, __nv_fp8_e4m3, false, true>("m16n8k32 f32.e4m3, A [M][K], B [N][K]", 41, 2e-3, 1e-3);
        mmaCase<32, float, __nv_fp8_e5m2, false, true>("m16n8k32 f32.e5m2, A [M][K], B [N][K]", 42, 2e-3, 1e-3);
        mmaCase<32, float, __nv_fp8_e4m3, false, true, __nv_fp8_e5m2>("m16n8k32 f32.e4m3.e5m2, A [M][K], B [N][K]", 43,
                                                                      2e-3, 1e-3);
        mmaCase<32, float, __nv_fp8_e5m2, false, true, __nv_fp8_e4m3>("m16n8k32 f32.e5m2.e4m3, A [M][K], B [N][K]", 44,
                                                                      2e-3, 1e-3);
    } else {
        std::printf("skip fp8 mma (the GPU is older than sm_89)\n");
    }
    std::printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}

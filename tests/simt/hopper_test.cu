// Checks the Hopper helpers (tl_cuda_mbarrier.h, tl_cuda_tma.h, tl_cuda_tma_host.h, tl_cuda_wgmma.h)
// that the sm_90 lowering combines: TMA loads tiles of a global matrix into swizzled shared
// memory and completes an mbarrier; wgmma reads the same tiles through shared-memory
// descriptors. So the swizzle TMA applies and the one the descriptors describe must agree, for
// every swizzle mode and for K-major and MN-major operands; a TMA store must put back what a
// load brought; boxes of 3- to 5-D tensor maps land densely, zero-filled past the tensor. Random
// inputs, references in double.
//
// Built two ways, like instructions_test.cu:
//  * as C++ against the SIMT simulator's stand-in headers (tests/simt/include): CTest simt-hopper
//    runs it and so checks the simulator's emulation of the helpers (the host helper
//    tl::make_tensor_map_2d is the real header, tl_cuda_tma_host.h, against the stand-in
//    cuTensorMapEncodeTiled);
//  * by nvcc for sm_90a against the real headers (CTest ptx-instructions-sm90): every helper
//    compiles warning-free and its instruction appears in the PTX; on a machine with an sm_90
//    GPU the same binary runs the same checks on the hardware.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#ifdef __CUDACC__
#include "tl_cuda_tma.h"
#include "tl_cuda_wgmma.h"
#endif
#include "tl_cuda_tma_host.h"  // host code: also against the simulator's stand-in driver

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "test_support.h"

namespace {

// ---- device side ------------------------------------------------------------------------------

// One k-tile is 128 bytes of K (64 16-bit or 128 8-bit elements), 4 instructions of 32 bytes.
constexpr int kTileBytes = 128;

// The global operands: A is M x K, stored [M][K] (K-major) or [K][M] (M-major); B is K x N,
// stored [N][K] (K-major) or [K][N] (N-major). TMA loads them in boxes whose rows are IB bytes
// (the swizzle span, or 16 without swizzle) into tiles the descriptors then describe:
//  * K-major, MN rows: box j (MN x IB bytes, K bytes [j * IB, (j + 1) * IB) of the tile) at
//    j * MN * IB. Swizzled: rows of IB bytes, atoms of 8 rows (stride 8 * IB); the instruction at
//    K byte 32 * s starts at box 32 * s / IB, byte 32 * s % IB. Unswizzled: each box is a column
//    of core matrices (8 rows x 16 bytes, stride 128 along MN) and the next box the next column
//    (leading offset MN * 16).
//  * MN-major: box j (kTile rows of K x IB bytes of MN) at j * kTile * IB; the instruction at K
//    rows 16 * s starts at 16 * s * IB. Swizzled: atoms of 8 K-rows (stride offset 8 * IB) and
//    the next box the next atom along MN (leading offset kTile * IB). Unswizzled: core matrices
//    of 8 K-rows x 16 bytes; the next 8 K-rows at leading offset 128, the next box (16 bytes of
//    MN further) at stride offset kTile * 16.
// WG warpgroups each compute a 64 x N tile of D, rows 64 * g ..; B is shared.
template <typename T, int Swz, int N, bool AK, bool BK, bool RS, int WG, typename TB>
__global__ void __launch_bounds__(128 * WG) tmaWgmma(const __grid_constant__ CUtensorMap mapA,
                                                     const __grid_constant__ CUtensorMap mapB, const T* A, int lda,
                                                     int M, int K, int tiles, float* D) {
    constexpr int es = int(sizeof(T));
    constexpr int IB = Swz ? Swz : 16;       // bytes per box row
    constexpr int KT = kTileBytes / es;      // K elements per tile
    constexpr int KI = 32 / es;              // K elements per instruction
    constexpr int boxCols = IB / es;
    __shared__ __align__(1024) unsigned char As[WG][64 * kTileBytes];
    __shared__ __align__(1024) unsigned char Bs[N * kTileBytes];
    __shared__ __align__(8) uint64_t bar;
    const int tid = threadIdx.x, g = tid / 128, t = tid % 128;
    if (tid == 0) {
        tl::mbarrier_init(&bar, 1);
        tl::fence_barrier_init();
    }
    __syncthreads();
    float d[N / 2];
    for (int i = 0; i < N / 2; ++i) d[i] = -1.0f;  // scale-d = false on the first k-step ignores these
    for (int kt = 0; kt < tiles; ++kt) {
        if (tid == 0) {
            tl::mbarrier_arrive_expect_tx(&bar, WG * 64 * kTileBytes + N * kTileBytes);
            for (int w = 0; w < WG; ++w)
                for (int j = 0; j < kTileBytes / IB; ++j) {
                    if (AK) tl::tma_load_2d(As[w] + j * 64 * IB, &mapA, &bar, kt * KT + j * boxCols, 64 * w);
                    else tl::tma_load_2d(As[w] + j * KT * IB, &mapA, &bar, 64 * w + j * boxCols, kt * KT);
                }
            if (BK)
                for (int j = 0; j < kTileBytes / IB; ++j) tl::tma_load_2d(Bs + j * N * IB, &mapB, &bar, kt * KT + j * boxCols, 0);
            else
                for (int j = 0; j < N * es / IB; ++j) tl::tma_load_2d(Bs + j * KT * IB, &mapB, &bar, j * boxCols, kt * KT);
        }
        tl::mbarrier_wait_parity(&bar, kt & 1);
        // A fragments of the rs form, one per instruction, packed into registers before the
        // fence as tlc's lowering does (read when the group completes).
        [[maybe_unused]] T a[4][8];
        [[maybe_unused]] uint32_t aRegs[16];
        if constexpr (RS) {
            const int w = t / 32, gr = (t % 32) / 4, q = t % 4;
            for (int s = 0; s < 4; ++s)
                for (int i = 0; i < 8; ++i) {
                    const int row = 64 * g + 16 * w + gr + 8 * ((i / 2) % 2);
                    const int col = kt * KT + KI * s + 2 * q + i % 2 + 8 * (i / 4);
                    a[s][i] = row < M && col < K ? A[row * lda + col] : T(0.0f);
                }
            tl::wgmma_pack_operand<16>(aRegs, &a[0][0]);
        }
        tl::wgmma_fence();
        tl::wgmma_fence_operand<N / 2>(d);
        for (int s = 0; s < kTileBytes / 32; ++s) {
            const uint64_t descA =
                AK ? tl::make_smem_desc(As[g] + (32 * s / IB) * 64 * IB + 32 * s % IB, Swz, Swz ? 16 : 64 * 16, 8 * IB)
                   : tl::make_smem_desc(As[g] + 16 * s * IB, Swz, Swz ? KT * IB : 128, Swz ? 8 * IB : KT * 16);
            const uint64_t descB =
                BK ? tl::make_smem_desc(Bs + (32 * s / IB) * N * IB + 32 * s % IB, Swz, Swz ? 16 : N * 16, 8 * IB)
                   : tl::make_smem_desc(Bs + 16 * s * IB, Swz, Swz ? KT * IB : 128, Swz ? 8 * IB : KT * 16);
            const bool scaleD = kt > 0 || s > 0;
            if constexpr (!std::is_same_v<T, TB>) {  // mixed fp8
                if constexpr (std::is_same_v<T, __nv_fp8_e4m3>) tl::wgmma_m64nNk32_f32_e4m3_e5m2_ss<N>(d, descA, descB, scaleD);
                else tl::wgmma_m64nNk32_f32_e5m2_e4m3_ss<N>(d, descA, descB, scaleD);
            } else if constexpr (std::is_same_v<T, __nv_fp8_e4m3>) {
                tl::wgmma_m64nNk32_f32_e4m3_ss<N>(d, descA, descB, scaleD);
            } else if constexpr (std::is_same_v<T, __nv_fp8_e5m2>) {
                tl::wgmma_m64nNk32_f32_e5m2_ss<N>(d, descA, descB, scaleD);
            } else if constexpr (RS) {
                if constexpr (std::is_same_v<T, __half>) tl::wgmma_m64nNk16_f32_f16_rs<N, !BK>(d, &aRegs[4 * s], descB, scaleD);
                else tl::wgmma_m64nNk16_f32_bf16_rs<N, !BK>(d, &aRegs[4 * s], descB, scaleD);
            } else {
                if constexpr (std::is_same_v<T, __half>) tl::wgmma_m64nNk16_f32_f16_ss<N, !AK, !BK>(d, descA, descB, scaleD);
                else tl::wgmma_m64nNk16_f32_bf16_ss<N, !AK, !BK>(d, descA, descB, scaleD);
            }
        }
        tl::wgmma_commit_group();
        tl::wgmma_wait_group<0>();
        tl::wgmma_fence_operand<N / 2>(d);
        __syncthreads();  // every warpgroup is done with the tiles before the next loads
    }
    const int w = t / 32, gr = (t % 32) / 4, q = t % 4;
    for (int i = 0; i < N / 2; ++i)
        D[(64 * g + 16 * w + gr + 8 * ((i / 2) % 2)) * N + 8 * (i / 4) + 2 * q + i % 2] = d[i];
}

// Thread 0 makes *bar a barrier of one arrival (the TMA issuer's) and fences the initialisation
// for TMA; the block waits for it.
__device__ void initOneArrivalBarrier(uint64_t* bar) {
    if (threadIdx.x == 0) {
        tl::mbarrier_init(bar, 1);
        tl::fence_barrier_init();
    }
    __syncthreads();
}

// Loads the 64 x (IB / 2) box of 16-bit elements at (c0, c1), copies the shared bytes as they
// lie to `dump`, and stores the box back through mapOut (same geometry, another tensor).
template <int Swz>
__global__ void tmaRoundTrip(const __grid_constant__ CUtensorMap mapIn, const __grid_constant__ CUtensorMap mapOut,
                             int c0, int c1, unsigned char* dump) {
    constexpr int IB = Swz ? Swz : 16;
    __shared__ __align__(1024) unsigned char S[64 * IB];
    __shared__ __align__(8) uint64_t bar;
    const int tid = threadIdx.x;
    initOneArrivalBarrier(&bar);
    if (tid == 0) {
        tl::mbarrier_arrive_expect_tx(&bar, 64 * IB);
        tl::tma_load_2d(S, &mapIn, &bar, c0, c1);
    }
    tl::mbarrier_wait_parity(&bar, 0);
    for (int i = tid; i < 64 * IB; i += blockDim.x) dump[i] = S[i];
    tl::fence_proxy_async_shared();
    __syncthreads();
    if (tid == 0) {
        tl::tma_store_2d(&mapOut, S, c0, c1);
        tl::tma_store_commit();
        // Once the store has read S, S may be written again: the output keeps the box.
        tl::tma_store_wait_read<0>();
        for (int i = 0; i < 64 * IB; ++i) S[i] = 0xEE;
        tl::tma_store_wait<0>();
    }
}

// Loads one box of a Rank-D tensor map (tl::tma_load_3d..5d; coordinates innermost first, c[d]
// for dimension d) and copies the shared bytes as they lie to `dump`.
template <int Rank>
__global__ void tmaLoadNd(const __grid_constant__ CUtensorMap map, int c0, int c1, int c2, int c3, int c4, int bytes,
                          unsigned char* dump) {
    __shared__ __align__(1024) unsigned char S[8192];
    __shared__ __align__(8) uint64_t bar;
    const int tid = threadIdx.x;
    initOneArrivalBarrier(&bar);
    if (tid == 0) {
        tl::mbarrier_arrive_expect_tx(&bar, bytes);
        if constexpr (Rank == 3) tl::tma_load_3d(S, &map, &bar, c0, c1, c2);
        if constexpr (Rank == 4) tl::tma_load_4d(S, &map, &bar, c0, c1, c2, c3);
        if constexpr (Rank == 5) tl::tma_load_5d(S, &map, &bar, c0, c1, c2, c3, c4);
    }
    tl::mbarrier_wait_parity(&bar, 0);
    for (int i = tid; i < bytes; i += blockDim.x) dump[i] = S[i];
}

// Barrier phases with several arrivals: every thread arrives on each of `rounds` phases and
// waits for it; a counter each thread bumps before arriving must be complete after the wait.
__global__ void mbarrierPhases(int rounds, int* errors) {
    __shared__ __align__(8) uint64_t bar;
    __shared__ int count[2];
    const int tid = threadIdx.x;
    if (tid == 0) {
        tl::mbarrier_init(&bar, blockDim.x);
        tl::fence_barrier_init();
        count[0] = count[1] = 0;
    }
    __syncthreads();
    for (int r = 0; r < rounds; ++r) {
        atomicAdd(&count[r & 1], 1);
        tl::mbarrier_arrive(&bar);
        tl::mbarrier_wait_parity(&bar, r & 1);
        if (count[r & 1] != int(blockDim.x) * (r / 2 + 1)) atomicAdd(errors, 1);
    }
}

// Warp specialisation's register hand-off in a block of 384 (168 registers a thread at entry):
// the last warpgroup gives registers back, the first two take them (232 = what the 128
// producers free, shared by 256 consumers), then each consumer gives a few back for the next
// request to take. A request larger than the pool would wait forever (a deadlock here); every
// consumer counts itself past the hand-off.
__global__ void __launch_bounds__(384, 1) registerHandOff(int* passed) {
    if (threadIdx.x >= 256) {
        tl::setmaxnreg_dec<40>();
        return;
    }
    tl::setmaxnreg_inc<232>();
    tl::setmaxnreg_dec<224>();
    tl::setmaxnreg_inc<232>();
    atomicAdd(passed, 1);
}

// ---- host side --------------------------------------------------------------------------------

void result(const std::string& what, int bad, size_t total) {
    if (bad) {
        std::printf("FAIL %s: %d of %zu differ\n", what.c_str(), bad, total);
        ++failures;
    } else {
        std::printf("ok   %s\n", what.c_str());
        ++passes;
    }
}

void expectStatus(const std::string& what, cudaError_t got, cudaError_t want) {
    result(what + " (status " + std::to_string(int(got)) + ", want " + std::to_string(int(want)) + ")", got != want, 1);
}

template <typename T> T fromFloat(float v) { return T(v); }
template <typename T> double toDouble(T v) { return double(float(v)); }
template <typename T> CUtensorMapDataType mapType() {
    if constexpr (std::is_same_v<T, __half>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    else return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}
CUtensorMapSwizzle swizzleMode(int span) {
    return span == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
           : span == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
           : span == 32 ? CU_TENSOR_MAP_SWIZZLE_32B
                        : CU_TENSOR_MAP_SWIZZLE_NONE;
}

template <typename T> std::vector<T> random(size_t n, std::mt19937& gen) {
    std::uniform_real_distribution<float> reals(-2.0f, 2.0f);
    std::vector<T> out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) out.push_back(fromFloat<T>(reals(gen)));
    return out;
}

// D (64 WG x N) = A (M x K) * B (K x N) over two k-tiles, the second partial; M, N end inside
// the tiles (rows / columns past them are zero-filled by TMA).
// TB: B's element type when it differs from A's (mixed fp8, both of one byte).
template <typename T, int Swz, int N, bool AK, bool BK, bool RS, int WG = 1, typename TB = T>
void wgmmaCase(const std::string& what, uint32_t seed) {
    constexpr int es = int(sizeof(T)), IB = Swz ? Swz : 16, KT = kTileBytes / es;
    const int K = 240 / es;                                      // 2 tiles, the second partial
    const int M = AK ? 64 * WG - 4 : 64 * WG - 8;                // row stride a multiple of 16 bytes when [K][M]
    const int Nn = BK ? N - 4 : N - 8;
    std::mt19937 gen(seed);
    static_assert(sizeof(TB) == sizeof(T), "A and B of one width");
    std::vector<T> a = random<T>(size_t(M) * K, gen);  // a[m][k]
    std::vector<TB> b = random<TB>(size_t(K) * Nn, gen);  // b[k][n]
    std::vector<T> storedA(a.size());
    std::vector<TB> storedB(b.size());
    for (int m = 0; m < M; ++m)
        for (int k = 0; k < K; ++k) storedA[AK ? m * K + k : k * M + m] = a[m * K + k];
    for (int k = 0; k < K; ++k)
        for (int n = 0; n < Nn; ++n) storedB[BK ? n * K + k : k * Nn + n] = b[k * Nn + n];
    Buffer<T> dA(storedA);
    Buffer<TB> dB(storedB);
    Buffer<float> dD(std::vector<float>(size_t(64) * WG * N, 12345.0f));
    CUtensorMap mapA, mapB;
    const CUtensorMapSwizzle sw = swizzleMode(Swz);
    cudaError_t sa = AK ? tl::make_tensor_map_2d(&mapA, dA.get(), mapType<T>(), M, K, K * es, 64, IB / es, sw)
                        : tl::make_tensor_map_2d(&mapA, dA.get(), mapType<T>(), K, M, M * es, KT, IB / es, sw);
    cudaError_t sb = BK ? tl::make_tensor_map_2d(&mapB, dB.get(), mapType<TB>(), Nn, K, K * es, N, IB / es, sw)
                        : tl::make_tensor_map_2d(&mapB, dB.get(), mapType<TB>(), K, Nn, Nn * es, KT, IB / es, sw);
    if (sa != cudaSuccess || sb != cudaSuccess) {
        result(what + ": make_tensor_map_2d", 1, 1);
        return;
    }
    if (!launch(128 * WG, tmaWgmma<T, Swz, N, AK, BK, RS, WG, TB>, mapA, mapB, static_cast<const T*>(dA.get()), K, M, K, 2,
                dD.get()))
        return;
    std::vector<float> got = dD.read();
    int bad = 0;
    for (int m = 0; m < 64 * WG; ++m)
        for (int n = 0; n < N; ++n) {
            double want = 0.0;
            if (m < M && n < Nn)
                for (int k = 0; k < K; ++k) want += toDouble(a[m * K + k]) * toDouble(b[k * Nn + n]);
            const double g = got[m * N + n];
            if (!(std::fabs(g - want) <= 1e-3 + 1e-4 * std::fabs(want))) {
                if (bad < 5) std::printf("  %s: D[%d][%d] = %.8g, expected %.8g\n", what.c_str(), m, n, g, want);
                ++bad;
            }
        }
    result(what, bad, size_t(64) * WG * N);
}

// TMA load + store of one 64 x (IB / 2) box over the bottom-right corner of a 70 x 56 f16
// matrix: checks the zero fill, the swizzled shared layout (against the CUDA programming guide's
// description: 16-byte chunk c of box row r lies at chunk c ^ ((r / (128 / S)) % (S / 16)) for a
// span of S bytes) and that the store writes exactly the in-bounds part back.
template <int Swz> void roundTripCase(const std::string& what, uint32_t seed) {
    constexpr int IB = Swz ? Swz : 16, boxCols = IB / 2;
    const int rows = 70, cols = 56, c0 = cols - boxCols / 2, c1 = rows - 60;
    std::mt19937 gen(seed);
    std::vector<__half> in = random<__half>(size_t(rows) * cols, gen);
    const __half sentinel(77.0f);
    Buffer<__half> dIn(in), dOut(std::vector<__half>(in.size(), sentinel));
    Buffer<unsigned char> dDump(std::vector<unsigned char>(64 * IB, 0xAB));
    CUtensorMap mapIn, mapOut;
    const CUtensorMapSwizzle sw = swizzleMode(Swz);
    if (tl::make_tensor_map_2d(&mapIn, dIn.get(), CU_TENSOR_MAP_DATA_TYPE_FLOAT16, rows, cols, cols * 2, 64, boxCols, sw) !=
            cudaSuccess ||
        tl::make_tensor_map_2d(&mapOut, dOut.get(), CU_TENSOR_MAP_DATA_TYPE_FLOAT16, rows, cols, cols * 2, 64, boxCols,
                               sw) != cudaSuccess) {
        result(what + ": make_tensor_map_2d", 1, 1);
        return;
    }
    if (!launch(128, tmaRoundTrip<Swz>, mapIn, mapOut, c0, c1, dDump.get())) return;
    std::vector<unsigned char> dump = dDump.read();
    int bad = 0;
    for (int r = 0; r < 64; ++r)
        for (int c = 0; c < boxCols; ++c) {
            const int gr = c1 + r, gc = c0 + c;
            __half want = gr < rows && gc < cols ? in[gr * cols + gc] : __half(0.0f);
            int chunk = c * 2 / 16;
            if constexpr (Swz != 0) chunk ^= (r / (128 / Swz)) % (Swz / 16);
            __half got;
            std::memcpy(&got, &dump[r * IB + chunk * 16 + c * 2 % 16], 2);
            if (std::memcmp(&got, &want, 2) != 0) {
                if (bad < 5) std::printf("  %s: shared box[%d][%d] = %g, expected %g\n", what.c_str(), r, c,
                                         toDouble(got), toDouble(want));
                ++bad;
            }
        }
    std::vector<__half> out = dOut.read();
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
            const bool inBox = r >= c1 && r < c1 + 64 && c >= c0 && c < c0 + boxCols;
            const __half want = inBox ? in[r * cols + c] : sentinel, got = out[r * cols + c];
            if (std::memcmp(&got, &want, 2) != 0) {
                if (bad < 5) std::printf("  %s: out[%d][%d] = %g, expected %g\n", what.c_str(), r, c, toDouble(got),
                                         toDouble(want));
                ++bad;
            }
        }
    result(what, bad, size_t(64) * boxCols + size_t(rows) * cols);
}

// A TMA load of one box of a random f16 tensor of Rank dimensions (sizes outermost first, rows
// packed), the box (innermost side 64 elements: one 128-byte swizzle span) starting at `start`
// (outermost first) so that it runs past the tensor's end, or before its start, in several
// dimensions. The shared bytes must hold the box densely, innermost first, 128-byte swizzled,
// with zeros where it leaves the tensor.
template <int Rank>
void tmaNdCase(const std::string& what, uint32_t seed, const uint64_t (&sizes)[Rank], const uint32_t (&box)[Rank],
               const int (&start)[Rank]) {
    std::mt19937 gen(seed);
    size_t elements = 1, boxElements = 1;
    for (int d = 0; d < Rank; ++d) elements *= sizes[d], boxElements *= box[d];
    std::vector<__half> in = random<__half>(elements, gen);
    Buffer<__half> dIn(in);
    Buffer<unsigned char> dDump(std::vector<unsigned char>(boxElements * 2, 0xAB));
    uint64_t strides[Rank - 1];  // bytes, outermost first
    uint64_t stride = 2;
    for (int d = Rank - 1; d > 0; --d) strides[d - 1] = stride *= sizes[d];
    CUtensorMap map;
    if (tl::make_tensor_map<Rank>(&map, dIn.get(), CU_TENSOR_MAP_DATA_TYPE_FLOAT16, sizes, strides, box,
                                  CU_TENSOR_MAP_SWIZZLE_128B) != cudaSuccess) {
        result(what + ": make_tensor_map", 1, 1);
        return;
    }
    int c[5] = {0, 0, 0, 0, 0};  // innermost first
    for (int d = 0; d < Rank; ++d) c[d] = start[Rank - 1 - d];
    if (!launch(128, tmaLoadNd<Rank>, map, c[0], c[1], c[2], c[3], c[4], int(boxElements * 2), dDump.get())) return;
    std::vector<unsigned char> dump = dDump.read();
    int bad = 0;
    for (size_t e = 0; e < boxElements; ++e) {
        // Element e of the box: its index in each dimension, innermost fastest.
        long long at[Rank];
        size_t rest = e, offset = 0;
        bool inside = true;
        for (int d = Rank - 1; d >= 0; --d) {
            at[d] = start[d] + (long long)(rest % box[d]);
            rest /= box[d];
            inside = inside && at[d] >= 0 && uint64_t(at[d]) < sizes[d];
        }
        for (int d = 0; d < Rank && inside; ++d) offset = offset * sizes[d] + size_t(at[d]);
        const __half want = inside ? in[offset] : __half(0.0f);
        const size_t r = e * 2 / 128, chunk = (e * 2 % 128 / 16) ^ (r % 8);
        __half got;
        std::memcpy(&got, &dump[r * 128 + chunk * 16 + e * 2 % 16], 2);
        if (std::memcmp(&got, &want, 2) != 0) {
            if (bad < 5) std::printf("  %s: box element %zu = %g, expected %g\n", what.c_str(), e, toDouble(got),
                                     toDouble(want));
            ++bad;
        }
    }
    result(what, bad, boxElements);
}

// The rules make_tensor_map<Rank> checks per dimension before it asks the driver.
void tensorMapNdRules() {
    Buffer<__half> buf(std::vector<__half>(4 * 8 * 64, __half(0.0f)));
    const __half* p = buf.get();
    CUtensorMap map;
    const auto f16 = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    const auto sw = CU_TENSOR_MAP_SWIZZLE_128B;
    expectStatus("tensor map 3-D: outer stride not a multiple of 16",
                 tl::make_tensor_map<3>(&map, p, f16, {4, 8, 64}, {8 * 128 + 8, 128}, {1, 8, 64}, sw), cudaErrorInvalidValue);
    expectStatus("tensor map 3-D: outer stride shorter than the rows inside it",
                 tl::make_tensor_map<3>(&map, p, f16, {4, 8, 64}, {7 * 128, 128}, {1, 8, 64}, sw), cudaErrorInvalidValue);
    expectStatus("tensor map 4-D: box of 0 in a squeezed dimension",
                 tl::make_tensor_map<4>(&map, p, f16, {2, 2, 8, 64}, {2 * 8 * 128, 8 * 128, 128}, {1, 0, 8, 64}, sw),
                 cudaErrorInvalidValue);
    expectStatus("tensor map 4-D: misaligned base",
                 tl::make_tensor_map<4>(&map, p + 1, f16, {2, 2, 8, 64}, {2 * 8 * 128, 8 * 128, 128}, {1, 1, 8, 64}, sw),
                 cudaErrorInvalidValue);
    expectStatus("tensor map 5-D: a valid one",
                 tl::make_tensor_map<5>(&map, p, f16, {2, 1, 2, 8, 64}, {2 * 8 * 128, 2 * 8 * 128, 8 * 128, 128},
                                        {1, 1, 1, 8, 64}, sw),
                 cudaSuccess);
}

// The rules make_tensor_map_2d checks before it asks the driver.
void tensorMapRules() {
    Buffer<__half> buf(std::vector<__half>(64 * 256, __half(0.0f)));
    const __half* p = buf.get();
    CUtensorMap map;
    const auto f16 = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    expectStatus("tensor map: misaligned base", tl::make_tensor_map_2d(&map, p + 1, f16, 64, 64, 128, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B),
                 cudaErrorInvalidValue);
    expectStatus("tensor map: row stride not a multiple of 16", tl::make_tensor_map_2d(&map, p, f16, 64, 60, 120, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B),
                 cudaErrorInvalidValue);
    expectStatus("tensor map: row stride shorter than a row", tl::make_tensor_map_2d(&map, p, f16, 64, 64, 112, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B),
                 cudaErrorInvalidValue);
    expectStatus("tensor map: box of 257 rows", tl::make_tensor_map_2d(&map, p, f16, 300, 64, 128, 257, 64, CU_TENSOR_MAP_SWIZZLE_128B),
                 cudaErrorInvalidValue);
    expectStatus("tensor map: 64-byte box rows with the 128B swizzle", tl::make_tensor_map_2d(&map, p, f16, 64, 64, 128, 64, 32, CU_TENSOR_MAP_SWIZZLE_128B),
                 cudaErrorInvalidValue);
    expectStatus("tensor map: 8-byte box rows", tl::make_tensor_map_2d(&map, p, f16, 64, 64, 128, 64, 4, CU_TENSOR_MAP_SWIZZLE_NONE),
                 cudaErrorInvalidValue);
    expectStatus("tensor map: a valid one", tl::make_tensor_map_2d(&map, p, f16, 64, 256, 512, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B),
                 cudaSuccess);
}

} // namespace

int main() {
#ifdef __CUDACC__
    cudaDeviceProp prop;
    if (!firstDevice(prop)) return 0;
    if (prop.major != 9) {
        std::printf("skip: the GPU is sm_%d%d, these helpers need sm_90a\n", prop.major, prop.minor);
        return 0;
    }
#endif
    tensorMapRules();
    tensorMapNdRules();

    {
        Buffer<int> errors(std::vector<int>(1, 0));
        if (launch(128, mbarrierPhases, 5, errors.get())) result("mbarrier: 5 phases of 128 arrivals", errors.read()[0], 5);
    }
    {
        Buffer<int> passed(std::vector<int>(1, 0));
        if (launch(384, registerHandOff, passed.get()))
            result("setmaxnreg: 128 producers' registers to 256 consumers", 256 - passed.read()[0], 256);
    }

    roundTripCase<128>("TMA load/store round trip, 128B swizzle", 1);
    roundTripCase<64>("TMA load/store round trip, 64B swizzle", 2);
    roundTripCase<32>("TMA load/store round trip, 32B swizzle", 3);
    roundTripCase<0>("TMA load/store round trip, no swizzle", 4);
    // Rank 3 to 5: boxes of 1 where a tile squeezes a dimension, and more than one row
    // dimension; partial at the tensor's ends (and before its start in one dimension).
    tmaNdCase<3>("TMA load 3-D, box 2 x 16 x 64 over the end", 5, {3, 20, 104}, {2, 16, 64}, {2, 8, 64});
    tmaNdCase<4>("TMA load 4-D, box 1 x 32 x 1 x 64 (a [B, S, H, D] tile)", 6, {2, 40, 3, 128}, {1, 32, 1, 64},
                 {1, 24, 2, 64});
    tmaNdCase<5>("TMA load 5-D, box 1 x 2 x 1 x 8 x 64, one dimension before the start", 7, {2, 3, 2, 9, 72},
                 {1, 2, 1, 8, 64}, {1, -1, 1, 4, 32});

    // f16 ss, K-major A and B, each swizzle, N = 64 and 128.
    wgmmaCase<__half, 128, 64, true, true, false>("wgmma m64n64k16 f16 ss, 128B swizzle, A K-major, B K-major", 11);
    wgmmaCase<__half, 128, 128, true, true, false>("wgmma m64n128k16 f16 ss, 128B swizzle, A K-major, B K-major", 12);
    wgmmaCase<__half, 64, 64, true, true, false>("wgmma m64n64k16 f16 ss, 64B swizzle, A K-major, B K-major", 13);
    wgmmaCase<__half, 32, 128, true, true, false>("wgmma m64n128k16 f16 ss, 32B swizzle, A K-major, B K-major", 14);
    wgmmaCase<__half, 0, 64, true, true, false>("wgmma m64n64k16 f16 ss, no swizzle, A K-major, B K-major", 15);
    // N = 32 (a 64-column accumulator over two warpgroups: MLA decode's scores).
    wgmmaCase<__half, 128, 32, true, true, false>("wgmma m64n32k16 f16 ss, 128B swizzle, A K-major, B K-major", 16);
    // MN-major operands (trans-a / trans-b).
    wgmmaCase<__half, 128, 128, true, false, false>("wgmma m64n128k16 f16 ss, 128B swizzle, A K-major, B N-major", 21);
    wgmmaCase<__half, 64, 64, false, false, false>("wgmma m64n64k16 f16 ss, 64B swizzle, A M-major, B N-major", 22);
    wgmmaCase<__half, 32, 64, false, true, false>("wgmma m64n64k16 f16 ss, 32B swizzle, A M-major, B K-major", 23);
    wgmmaCase<__half, 0, 128, false, false, false>("wgmma m64n128k16 f16 ss, no swizzle, A M-major, B N-major", 24);
    // rs: A from registers.
    wgmmaCase<__half, 128, 64, true, true, true>("wgmma m64n64k16 f16 rs, 128B swizzle, B K-major", 31);
    wgmmaCase<__half, 128, 128, true, false, true>("wgmma m64n128k16 f16 rs, 128B swizzle, B N-major", 32);
    wgmmaCase<__half, 64, 128, true, false, true>("wgmma m64n128k16 f16 rs, 64B swizzle, B N-major", 33);
    wgmmaCase<__half, 64, 32, true, false, true>("wgmma m64n32k16 f16 rs, 64B swizzle, B N-major", 34);
    // bf16, fp8, two warpgroups.
    wgmmaCase<__nv_bfloat16, 128, 128, true, false, false>("wgmma m64n128k16 bf16 ss, 128B swizzle, A K-major, B N-major", 41);
    wgmmaCase<__nv_bfloat16, 128, 64, true, true, true>("wgmma m64n64k16 bf16 rs, 128B swizzle, B K-major", 42);
    wgmmaCase<__nv_fp8_e4m3, 128, 128, true, true, false>("wgmma m64n128k32 e4m3 ss, 128B swizzle, A K-major, B K-major", 43);
    wgmmaCase<__nv_fp8_e5m2, 128, 128, true, true, false>("wgmma m64n128k32 e5m2 ss, 128B swizzle, A K-major, B K-major", 47);
    wgmmaCase<__nv_fp8_e4m3, 128, 128, true, true, false, 1, __nv_fp8_e5m2>(
        "wgmma m64n128k32 e4m3 x e5m2 ss, 128B swizzle, A K-major, B K-major", 48);
    wgmmaCase<__nv_fp8_e5m2, 64, 64, true, true, false, 1, __nv_fp8_e4m3>(
        "wgmma m64n64k32 e5m2 x e4m3 ss, 64B swizzle, A K-major, B K-major", 49);
    wgmmaCase<__half, 128, 256, true, false, false>("wgmma m64n256k16 f16 ss, 128B swizzle, A K-major, B N-major", 45);
    wgmmaCase<__half, 64, 256, true, true, true>("wgmma m64n256k16 f16 rs, 64B swizzle, B K-major", 46);
    wgmmaCase<__half, 128, 128, true, false, false, 2>("wgmma m64n128k16 f16 ss, two warpgroups, 128B swizzle", 44);

    std::printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
}

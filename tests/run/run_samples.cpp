// Run layer: every sample, compiled for --target=cpu, against a double-precision reference
// on random inputs, with sizes that are and are not multiples of the tiles.
#include "harness.h"

#include "flash_attention.h"
#include "flash_attention_ov.h"
#include "flash_attention_ov_pp.h"
#include "flash_attention_pp.h"
#include "flash_attention_pp_persist.h"
#include "gemm.h"
#include "gemm_auto.h"
#include "gemm_auto_variants.h"
#include "gemm_bf16.h"
#include "gemm_fp8.h"
#include "gemm_i8.h"
#include "gemm_nt.h"
#include "gemm_tn.h"
#include "gemm_tt.h"
#include "reduce_sum.h"
#include "rmsnorm.h"
#include "softmax.h"
#include "softmax_auto.h"
#include "vector_add.h"
#include "vector_add_aligned.h"

#include <algorithm>
#include <cmath>

using namespace harness;

namespace {

// `shift`: A and C start that many elements into their buffers (views with offsets, off the
// 16-byte grid on GPUs, where the general variant runs them).
void vectorAdd(int N, int shift = 0) {
    auto A = random<float>(size_t(N) + shift, 1), B = random<float>(N, 2);
    std::vector<float> Cstore(size_t(N) + shift, -7.0f);
    std::vector<double> want(N);
    for (int i = 0; i < N; ++i) want[i] = double(A[i + shift]) + double(B[i]);
    std::string at = "N=" + std::to_string(N) + (shift ? " shift=" + std::to_string(shift) : "");
    expectStatus("vector_add status " + at,
                 tl_kernels::vector_add(A.data() + shift, B.data(), Cstore.data() + shift, N), 0);
    check("vector_add " + at, std::vector<float>(Cstore.begin() + shift, Cstore.end()), want, 1e-6, 1e-6);
    check("vector_add " + at + " before C untouched", std::vector<float>(Cstore.begin(), Cstore.begin() + shift),
          std::vector<double>(size_t(shift), -7.0), 0, 0);
}

// samples/vector_add.tl built with --assume-aligned (namespace tl_aligned): the fast variant alone,
// whose GPU launcher refuses what its vectors cannot take and launches nothing.
void vectorAddAssumeAligned(int N, int shift) {
    auto A = random<float>(size_t(N) + shift, 1), B = random<float>(N, 2);
    std::vector<float> C(size_t(N) + shift, -7.0f);
    std::string at = " N=" + std::to_string(N) + " shift=" + std::to_string(shift);
    const bool runs = !kGpu || (N % 4 == 0 && shift % 4 == 0);
    int status = tl_aligned::vector_add(A.data() + shift, B.data(), C.data() + shift, N);
    if (!launched("vector_add --assume-aligned" + at, status, runs, C, -7.0)) return;
    std::vector<double> want(C.size(), -7.0);
    for (int i = 0; i < N; ++i) want[i + shift] = double(A[i + shift]) + double(B[i]);
    check("vector_add --assume-aligned" + at, C, want, 1e-6, 1e-6);
}

void reduceSum(int M, int N) {
    auto X = random<float>(size_t(M) * N, 3);
    std::vector<float> Y(M, -7.0f);
    std::vector<double> want(M, 0.0);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) want[i] += X[size_t(i) * N + j];
    expectStatus("reduce_sum status", tl_kernels::reduce_sum(X.data(), Y.data(), M, N), 0);
    check("reduce_sum M=" + std::to_string(M) + " N=" + std::to_string(N), Y, want, 1e-4, 1e-5);
}

// samples/softmax.tl, and samples/softmax_auto.tl (block_M and threads `auto`) through the same
// launcher signature.
// `shift`: X starts that many elements into its buffer.
template <typename Launch>
void softmaxOf(const std::string& name, Launch launch, int M, int shift = 0) {
    const int N = 1024;
    auto Xstore = random<float>(size_t(M) * N + shift, 4, -4.0, 4.0);
    std::vector<float> X(Xstore.begin() + shift, Xstore.end());
    std::vector<float> Y(size_t(M) * N, -7.0f);
    std::vector<double> want(size_t(M) * N);
    for (int i = 0; i < M; ++i) {
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < N; ++j) mx = std::max(mx, double(X[size_t(i) * N + j]));
        for (int j = 0; j < N; ++j) sum += std::exp(double(X[size_t(i) * N + j]) - mx);
        for (int j = 0; j < N; ++j) want[size_t(i) * N + j] = std::exp(double(X[size_t(i) * N + j]) - mx) / sum;
    }
    std::string at = " M=" + std::to_string(M) + (shift ? " shift=" + std::to_string(shift) : "");
    expectStatus(name + " status" + at, launch(Xstore.data() + shift, Y.data(), M), 0);
    check(name + at, Y, want, 1e-6, 1e-4);
}

// (Lambdas: a GPU launcher's default stream argument does not survive a function pointer.)
void softmax(int M, int shift = 0) {
    softmaxOf("softmax", [](const float* X, float* Y, int m) { return tl_kernels::softmax(X, Y, m); }, M, shift);
}
void softmaxAuto(int M) {
    softmaxOf("softmax_auto", [](const float* X, float* Y, int m) { return tl_kernels::softmax_auto(X, Y, m); }, M);
}

// `shift`: W starts that many elements into its buffer.
void rmsnorm(int M, int shift = 0) {
    const int N = 4096;
    const float eps = 1e-5f;
    auto X = random<tl::half>(size_t(M) * N, 5), Wstore = random<tl::half>(size_t(N) + shift, 6);
    std::vector<tl::half> W(Wstore.begin() + shift, Wstore.end());
    std::vector<tl::half> Y(size_t(M) * N, tl::half(-7.0f));
    std::vector<double> want(size_t(M) * N);
    for (int i = 0; i < M; ++i) {
        double ss = 0;
        for (int j = 0; j < N; ++j) ss += std::pow(toDouble(X[size_t(i) * N + j]), 2);
        double r = 1.0 / std::sqrt(ss / N + eps);
        for (int j = 0; j < N; ++j) want[size_t(i) * N + j] = toDouble(X[size_t(i) * N + j]) * r * toDouble(W[j]);
    }
    std::string at = " M=" + std::to_string(M) + (shift ? " shift=" + std::to_string(shift) : "");
    expectStatus("rmsnorm status" + at, tl_kernels::rmsnorm(X.data(), Wstore.data() + shift, Y.data(), eps, M), 0);
    check("rmsnorm" + at, Y, want, 2e-3, 1e-2);
}

void gemm(int M, int N, int K) {
    auto A = random<tl::half>(size_t(M) * K, 7), B = random<tl::half>(size_t(K) * N, 8);
    std::vector<tl::half> C(size_t(M) * N, tl::half(-7.0f));
    std::vector<double> want(size_t(M) * N, 0.0);
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k)
            for (int j = 0; j < N; ++j) want[size_t(i) * N + j] += toDouble(A[size_t(i) * K + k]) * toDouble(B[size_t(k) * N + j]);
    expectStatus("gemm status", tl_kernels::gemm(A.data(), B.data(), C.data(), M, K, N), 0);
    check("gemm " + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K), C, want, 1e-2, 1e-2);
}

// samples/gemm_auto.tl: every tile parameter `auto`, filled by the recommender for the target.
void gemmAuto(int M, int N, int K) {
    auto A = random<tl::half>(size_t(M) * K, 17), B = random<tl::half>(size_t(K) * N, 18);
    std::vector<tl::half> C(size_t(M) * N, tl::half(-7.0f));
    std::vector<double> want(size_t(M) * N, 0.0);
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k)
            for (int j = 0; j < N; ++j) want[size_t(i) * N + j] += toDouble(A[size_t(i) * K + k]) * toDouble(B[size_t(k) * N + j]);
    expectStatus("gemm_auto status", tl_kernels::gemm_auto(A.data(), B.data(), C.data(), M, K, N), 0);
    check("gemm_auto " + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K), C, want, 1e-2, 1e-2);
}

// samples/gemm_auto.tl with --emit-variants=3: every variant by index, and the dispatcher's pick.
void gemmAutoVariants(int M, int N, int K) {
    auto A = random<tl::half>(size_t(M) * K, 19), B = random<tl::half>(size_t(K) * N, 20);
    std::vector<double> want(size_t(M) * N, 0.0);
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k)
            for (int j = 0; j < N; ++j) want[size_t(i) * N + j] += toDouble(A[size_t(i) * K + k]) * toDouble(B[size_t(k) * N + j]);
    std::string size = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
    expectStatus("gemm_auto variant count", tl_variants::gemm_auto_variant_count, 3);
    for (int v = 0; v < tl_variants::gemm_auto_variant_count; ++v) {
        std::vector<tl::half> C(size_t(M) * N, tl::half(-7.0f));
        std::string name = tl_variants::gemm_auto_variant_name(v);
        expectStatus(name + " status", tl_variants::gemm_auto_variant(v, A.data(), B.data(), C.data(), M, K, N), 0);
        check(name + " " + size, C, want, 1e-2, 1e-2);
    }
    int pick = tl_variants::gemm_auto_pick(M, K, N);
    expectStatus("gemm_auto_pick in range", pick >= 0 && pick < tl_variants::gemm_auto_variant_count, 1);
    std::vector<tl::half> C(size_t(M) * N, tl::half(-7.0f));
    expectStatus("gemm_auto (dispatcher) status", tl_variants::gemm_auto(A.data(), B.data(), C.data(), M, K, N), 0);
    check("gemm_auto (dispatcher) " + size, C, want, 1e-2, 1e-2);
    std::fill(C.begin(), C.end(), tl::half(-7.0f));
    // The dispatcher's extern "C" twin (its prefix set by --c-prefix=tlv_).
    expectStatus("tlv_gemm_auto (C dispatcher) status", tlv_gemm_auto(A.data(), B.data(), C.data(), M, K, N, nullptr), 0);
    check("tlv_gemm_auto (C dispatcher) " + size, C, want, 1e-2, 1e-2);
    expectStatus("gemm_auto_variant(3) refused", tl_variants::gemm_auto_variant(3, A.data(), B.data(), C.data(), M, K, N) != 0, 1);
}

std::string dims(int M, int N, int K) {
    return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
}

void gemmBf16(int M, int N, int K) {
    auto A = random<tl::bfloat16>(size_t(M) * K, 21), B = random<tl::bfloat16>(size_t(K) * N, 22);
    std::vector<tl::bfloat16> C(size_t(M) * N, tl::bfloat16(-7.0f));
    auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                       [&](int k, int j) { return toDouble(B[size_t(k) * N + j]); });
    expectStatus("gemm_bf16 status", tl_kernels::gemm_bf16(A.data(), B.data(), C.data(), M, K, N), 0);
    check("gemm_bf16 " + dims(M, N, K), C, want, 2e-2, 1e-2);
}

// i8 x i8 -> i32 with B given as [N, K]: exact.
void gemmI8(int M, int N, int K) {
    auto A = random<int8_t>(size_t(M) * K, 23, -128, 127), B = random<int8_t>(size_t(N) * K, 24, -128, 127);
    std::vector<int32_t> C(size_t(M) * N, -7);
    auto want = matmul(M, N, K, [&](int i, int k) { return double(A[size_t(i) * K + k]); },
                       [&](int k, int j) { return double(B[size_t(j) * K + k]); });
    expectStatus("gemm_i8 status", tl_kernels::gemm_i8(A.data(), B.data(), C.data(), M, K, N), 0);
    check("gemm_i8 " + dims(M, N, K), C, want, 0, 0);
}

// e4m3 x e4m3 -> f32 -> f16 with B given as [N, K]; the reference multiplies the e4m3 values.
void gemmFp8(int M, int N, int K) {
    auto A = random<tl::fp8_e4m3>(size_t(M) * K, 25), B = random<tl::fp8_e4m3>(size_t(N) * K, 26);
    std::vector<tl::half> C(size_t(M) * N, tl::half(-7.0f));
    auto want = matmul(M, N, K, [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); },
                       [&](int k, int j) { return toDouble(B[size_t(j) * K + k]); });
    expectStatus("gemm_fp8 status", tl_kernels::gemm_fp8(A.data(), B.data(), C.data(), M, K, N), 0);
    check("gemm_fp8 " + dims(M, N, K), C, want, 1e-2, 1e-2);
}

// f16 gemm with A given as [K, M] (transpose_A) and / or B as [N, K] (transpose_B).
void gemmTransposed(int M, int N, int K) {
    auto A = random<tl::half>(size_t(M) * K, 27), B = random<tl::half>(size_t(K) * N, 28);
    auto aMK = [&](int i, int k) { return toDouble(A[size_t(i) * K + k]); };
    auto aKM = [&](int i, int k) { return toDouble(A[size_t(k) * M + i]); };
    auto bKN = [&](int k, int j) { return toDouble(B[size_t(k) * N + j]); };
    auto bNK = [&](int k, int j) { return toDouble(B[size_t(j) * K + k]); };
    std::vector<tl::half> C(size_t(M) * N, tl::half(-7.0f));
    expectStatus("gemm_nt status", tl_kernels::gemm_nt(A.data(), B.data(), C.data(), M, K, N), 0);
    check("gemm_nt " + dims(M, N, K), C, matmul(M, N, K, aMK, bNK), 1e-2, 1e-2);
    C.assign(C.size(), tl::half(-7.0f));
    expectStatus("gemm_tn status", tl_kernels::gemm_tn(A.data(), B.data(), C.data(), K, M, N), 0);
    check("gemm_tn " + dims(M, N, K), C, matmul(M, N, K, aKM, bKN), 1e-2, 1e-2);
    C.assign(C.size(), tl::half(-7.0f));
    expectStatus("gemm_tt status", tl_kernels::gemm_tt(A.data(), B.data(), C.data(), K, M, N), 0);
    check("gemm_tt " + dims(M, N, K), C, matmul(M, N, K, aKM, bNK), 1e-2, 1e-2);
}

// pingPong: the sample at 128 query rows over two warpgroups (256 threads, 3 stages), which on
// sm90 take turns issuing the gemms (the ping-pong schedule); otherwise its defaults. Alone, with
// 128 x 128 tiles at D = 32 (they fit gfx90a's 64 KB; one block fills an sm90 SM, so the loop is
// warp-specialised); with overlap or persistent, 128 x 64 tiles at D = 64.
// overlap: with overlap = true (the softmax overlapping the previous block's P V gemm on sm90).
void flashAttention(int Bn, int S, int H, bool pingPong = false, bool overlap = false, bool persistent = false) {
    const int D = !pingPong ? 128 : overlap || persistent ? 64 : 32;
    size_t n = size_t(Bn) * S * H * D;
    auto Q = random<tl::half>(n, 9), K = random<tl::half>(n, 10), V = random<tl::half>(n, 11);
    std::vector<tl::half> O(n, tl::half(-7.0f));
    auto at = [&](int b, int s, int h, int d) { return ((size_t(b) * S + s) * H + h) * D + d; };
    std::vector<double> want =
        attention(Bn, S, H, D, [&](int b, int s, int h, int d) { return toDouble(Q[at(b, s, h, d)]); },
                  [&](int b, int s, int h, int d) { return toDouble(K[at(b, s, h, d)]); },
                  [&](int b, int s, int h, int d) { return toDouble(V[at(b, s, h, d)]); });
    const std::string name = std::string("flash_attention") + (pingPong ? " (2 warpgroups)" : "") +
                             (overlap ? " (overlap)" : "") + (persistent ? " (persistent)" : "");
    expectStatus(name + " status",
                 persistent ? tl_pp_persist::flash_attention(Q.data(), K.data(), V.data(), O.data(), Bn, S, H)
                 : pingPong && overlap ? tl_ov_pp::flash_attention(Q.data(), K.data(), V.data(), O.data(), Bn, S, H)
                 : overlap           ? tl_ov::flash_attention(Q.data(), K.data(), V.data(), O.data(), Bn, S, H)
                 : pingPong          ? tl_pp::flash_attention(Q.data(), K.data(), V.data(), O.data(), Bn, S, H)
                                     : tl_kernels::flash_attention(Q.data(), K.data(), V.data(), O.data(), Bn, S, H),
                 0);
    check(name + " B=" + std::to_string(Bn) + " S=" + std::to_string(S) + " H=" + std::to_string(H), O, want, 2e-3,
          2e-2);
}

} // namespace

int main() {
    vectorAdd(4096);
    vectorAdd(1000);
    vectorAdd(1001);      // not whole 16-byte vectors: the general variant on GPUs
    vectorAdd(1000, 1);   // A and C one element into their buffers
    vectorAddAssumeAligned(1000, 0);
    vectorAddAssumeAligned(1001, 0);
    vectorAddAssumeAligned(1000, 1);
    reduceSum(64, 1024);
    reduceSum(37, 300);
    reduceSum(37, 301);   // rows of 1204 bytes
    softmax(16);
    softmax(7);
    softmax(7, 1);
    softmaxAuto(300);
    softmaxAuto(7);
    rmsnorm(8);
    rmsnorm(5);
    rmsnorm(5, 3);
    gemm(256, 256, 64);
    gemm(200, 136, 72);
    gemm(77, 70, 100);    // K = 100, N = 70: rows of 200 and 140 bytes
    // K over more k-tiles than the deepest pipeline has versions (sm90 gives the samples' 128 x
    // 128 x 32 tiles 7, pipeline/Depth.cpp): each version refilled twice, the last tile partial.
    gemm(136, 200, 520);
    flashAttention(1, 128, 2);
    flashAttention(2, 100, 1);
    flashAttention(1, 200, 2, true);  // 2 query blocks and 2 key blocks of 128, both partial
    flashAttention(1, 64, 1, true);   // one key block: a single turn each
    flashAttention(1, 520, 1, true);  // 5 key blocks through 3 versions, the last one partial
    flashAttention(1, 200, 1, false, true);  // 4 key blocks: the second gemm a step behind the first
    flashAttention(2, 64, 1, false, true);   // one key block: the prologue and the last epilogue step only
    flashAttention(1, 300, 2, true, true);   // both: the two gemms one turn
    flashAttention(1, 100, 1, true, true);
    // A persistent grid on the simulator's 3 SMs: 2 x 2 x 2 and 2 x 3 x 1 tiles of 128 query rows.
    flashAttention(2, 200, 2, true, false, true);
    flashAttention(1, 300, 3, true, false, true);
    // Sizes that are and are not multiples of the tiles, rows that are and are not whole 16-byte
    // vectors (the latter run the general variants on GPUs).
    gemmBf16(256, 256, 64);
    gemmBf16(200, 136, 72);
    gemmBf16(72, 70, 100);
    gemmI8(256, 256, 128);
    gemmI8(200, 144, 80);
    gemmI8(72, 70, 100);
    gemmI8(72, 144, 1008);
    gemmFp8(256, 256, 128);
    gemmFp8(200, 144, 80);
    gemmFp8(72, 70, 100);
    gemmTransposed(256, 256, 64);
    gemmTransposed(200, 136, 72);
    gemmTransposed(77, 70, 100);
    gemmTransposed(72, 136, 520);
    gemmAuto(256, 256, 64);
    gemmAuto(200, 136, 72);
    gemmAuto(77, 70, 100);
    gemmAutoVariants(256, 256, 64);
    gemmAutoVariants(200, 136, 72);
    gemmAutoVariants(77, 70, 100);
    return summary();
}

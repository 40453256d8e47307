// Run layer: the expert level (thread-level code). The thread-level samples and a kernel that
// exercises every collective, against double-precision references on random inputs, with sizes
// that are and are not multiples of the blocks. The warp size is the target's (32 on sm80 and
// the cpu, 64 on gfx90a): the kernel reports it and the references follow it.
#include "harness.h"

#include "block_histogram.h"
#include "gemv_fp16xint4.h"
#include "thread_atomics.h"
#include "thread_collectives.h"
#include "thread_extern.h"
#include "thread_vector.h"
#include "thread_votes.h"
#include "warp_softmax.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

using namespace harness;

namespace {

std::string dims(std::initializer_list<std::pair<const char*, int>> sizes) {
    std::string out;
    for (const auto& [name, value] : sizes) out += (out.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(value);
    return out;
}

void warpSoftmax(int M, int N) {
    const std::string at = " " + dims({{"M", M}, {"N", N}});
    auto X = random<float>(size_t(M) * N, 41, -4.0, 4.0);
    std::vector<float> Y(size_t(M) * N, -7.0f);
    std::vector<double> want(Y.size());
    for (int m = 0; m < M; ++m) {
        double mx = -1e300, sum = 0.0;
        for (int n = 0; n < N; ++n) mx = std::max(mx, double(X[size_t(m) * N + n]));
        for (int n = 0; n < N; ++n) sum += std::exp(double(X[size_t(m) * N + n]) - mx);
        for (int n = 0; n < N; ++n) want[size_t(m) * N + n] = std::exp(double(X[size_t(m) * N + n]) - mx) / sum;
    }
    expectStatus("warp_softmax status" + at, tl_kernels::warp_softmax(X.data(), Y.data(), M, N), 0);
    check("warp_softmax" + at, Y, want, 1e-6, 1e-5);
}

void blockHistogram(int N) {
    const std::string at = " " + dims({{"N", N}});
    auto X = random<int32_t>(N, 42, 0, 1000);
    std::vector<int32_t> H(64, 0);
    std::vector<double> want(64, 0.0);
    for (int32_t x : X) want[size_t(x % 64)] += 1;
    expectStatus("block_histogram status" + at, tl_kernels::block_histogram(X.data(), H.data(), N), 0);
    check("block_histogram" + at, H, want, 0, 0);
}

void gemvInt4(int M, int N, int K) {
    const std::string at = " " + dims({{"M", M}, {"N", N}, {"K", K}});
    const int group = 128;
    auto A = random<tl::half>(size_t(M) * K, 43, 0.0, 1.0);
    auto B = random<uint8_t>(size_t(N) * K / 2, 44, 0, 255);
    auto S = random<tl::half>(size_t(N) * (K / group), 45, 0.01, 0.1);
    std::vector<tl::half> C(size_t(M) * N, tl::half(-7.0f));
    std::vector<double> want(C.size(), 0.0);
    for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
            double sum = 0.0;
            for (int k = 0; k < K; ++k) {
                int nibble = (B[size_t(n) * K / 2 + k / 2] >> (k % 2 * 4)) & 15;
                // The kernel rounds each dequantised weight to f16, as the original does.
                float w = float(tl::half(float(nibble) * float(S[size_t(n) * (K / group) + k / group])));
                sum += toDouble(A[size_t(m) * K + k]) * double(w);
            }
            want[size_t(m) * N + n] = sum;
        }
    expectStatus("gemv_fp16xint4 status" + at,
                 int(tl_kernels::gemv_fp16xint4(A.data(), B.data(), S.data(), C.data(), M, K, N)), 0);
    // f32 sums of f16 products, rounded once to f16.
    check("gemv_fp16xint4" + at, C, want, 1e-2, 2e-3);
}

void collectives(int N) {
    const std::string at = " " + dims({{"N", N}});
    const int threads = 128, G = (N + threads - 1) / threads;
    auto X = random<float>(N, 46, -1.0, 1.0);
    std::vector<float> Down(N, -7), Up(N, -7), Idx(N, -7), Xor(N, -7), WSum(N, -7), WMin(N, -7), BSum(G, -7), BMax(G, -7);
    std::vector<int32_t> Ids(N, -7), WS(1, -7);
    expectStatus("thread_collectives status" + at,
                 tl_kernels::thread_collectives(X.data(), Down.data(), Up.data(), Idx.data(), Xor.data(), WSum.data(),
                                                WMin.data(), BSum.data(), BMax.data(), Ids.data(), WS.data(), N, G),
                 0);
    const int W = WS[0];
    if (W != 32 && W != 64) {
        std::printf("FAIL thread_collectives: warp_size() = %d\n", W);
        ++failures();
        return;
    }
    // x of thread t of block b, zero past N (reads past the end).
    auto x = [&](int b, int t) { return b * threads + t < N ? double(X[size_t(b * threads + t)]) : 0.0; };
    std::vector<double> down(N), up(N), idx(N), xr(N), wsum(N), wmin(N), bsum(G), bmax(G), ids(N);
    for (int b = 0; b < G; ++b) {
        double s = 0, m = -1e300;
        for (int t = 0; t < threads; ++t) {
            s += x(b, t);
            m = std::max(m, x(b, t));
        }
        bsum[size_t(b)] = s;
        bmax[size_t(b)] = m;
        for (int t = 0; t < threads && b * threads + t < N; ++t) {
            size_t i = size_t(b * threads + t);
            down[i] = x(b, t % W + 1 < W ? t + 1 : t);
            up[i] = x(b, t % 16 >= 2 ? t - 2 : t);
            idx[i] = x(b, t - t % W + (5 + b % 3) % W);
            xr[i] = x(b, t ^ 3);
            double gs = 0, gm = 1e300;
            for (int j = t - t % 16; j < t - t % 16 + 16; ++j) gs += x(b, j);
            for (int j = t - t % W; j < t - t % W + W; ++j) gm = std::min(gm, x(b, j));
            wsum[i] = gs;
            wmin[i] = gm;
            ids[i] = t % 16 + 100 * (t / 16 % 4) + 1000 * (t / 64) + 10000 * (t % W) + 1000000 * (t / W);
        }
    }
    check("shfl_down" + at, Down, down, 0, 0);
    check("shfl_up width 16" + at, Up, up, 0, 0);
    check("shfl_idx" + at, Idx, idx, 0, 0);
    check("shfl_xor width 8" + at, Xor, xr, 0, 0);
    check("warp_reduce_sum width 16" + at, WSum, wsum, 1e-5, 1e-5);
    check("warp_reduce_min" + at, WMin, wmin, 0, 0);
    check("block_reduce_sum" + at, BSum, bsum, 1e-4, 1e-5);
    check("block_reduce_max" + at, BMax, bmax, 0, 0);
    check("thread_id, lane_id, warp_id" + at, Ids, ids, 0, 0);
}

// dp4a's definition: the four bytes of a times those of b, summed into c.
int64_t dot4(uint32_t a, uint32_t b, int64_t c, bool isSigned) {
    for (int i = 0; i < 4; ++i) {
        uint32_t x = (a >> (8 * i)) & 0xffu, y = (b >> (8 * i)) & 0xffu;
        c += isSigned ? int64_t(int8_t(x)) * int64_t(int8_t(y)) : int64_t(x) * int64_t(y);
    }
    return c;
}

void votes(int N) {
    const std::string at = " " + dims({{"N", N}});
    const int threads = 128;
    auto X = random<float>(N, 47, -1.0, 1.0);
    std::vector<unsigned long long> B(N, 7);  // the launchers' u64
    std::vector<int32_t> AnyAll(N, -7), D(N, -7), WS(1, -7);
    std::vector<uint32_t> U(N, 7);
    expectStatus("thread_votes status" + at,
                 tl_kernels::thread_votes(X.data(), B.data(), AnyAll.data(), D.data(), U.data(), WS.data(), N), 0);
    const int W = WS[0];
    if (W != 32 && W != 64) {
        std::printf("FAIL thread_votes: warp_size() = %d\n", W);
        ++failures();
        return;
    }
    auto x = [&](int i) { return i < N ? double(X[size_t(i)]) : 0.0; };
    std::vector<uint64_t> b(N);
    std::vector<double> anyAll(N), d(N), u(N);
    for (int i = 0; i < N; ++i) {
        int first = i - i % threads + (i % threads) / W * W;  // the warp's first thread
        uint64_t mask = 0;
        bool any = false, all = true;
        for (int l = 0; l < W; ++l) {
            mask |= x(first + l) > 0.0 ? uint64_t(1) << l : 0;
            any = any || x(first + l) > 0.9;
            all = all && x(first + l) > -0.9;
        }
        b[size_t(i)] = mask;
        anyAll[size_t(i)] = double(any) + 2.0 * double(all);
        int32_t a = int32_t(float(X[size_t(i)]) * 1000.0f) * 65793;
        d[size_t(i)] = double(int32_t(dot4(uint32_t(a), 0x01ff7f80u, i, true)));
        u[size_t(i)] = double(uint32_t(dot4(uint32_t(i) * 2654435761u, 0x80ff017fu, 7, false)));
    }
    // Masks compare exactly: doubles hold 53 bits, so check the low and high halves apart.
    std::vector<uint32_t> lo(N), hi(N);
    std::vector<double> wantLo(N), wantHi(N);
    for (int i = 0; i < N; ++i) {
        lo[size_t(i)] = uint32_t(B[size_t(i)]);
        hi[size_t(i)] = uint32_t(B[size_t(i)] >> 32);
        wantLo[size_t(i)] = double(uint32_t(b[size_t(i)]));
        wantHi[size_t(i)] = double(uint32_t(b[size_t(i)] >> 32));
    }
    check("ballot (low lanes)" + at, lo, wantLo, 0, 0);
    check("ballot (high lanes)" + at, hi, wantHi, 0, 0);
    check("any + 2 * all" + at, AnyAll, anyAll, 0, 0);
    check("dp4a i32" + at, D, d, 0, 0);
    check("dp4a u32" + at, U, u, 0, 0);
}

void atomics(int N) {
    const std::string at = " " + dims({{"N", N}});
    const int threads = 128, G = (N + threads - 1) / threads;
    auto X = random<float>(N, 48, -100.0, 100.0);
    auto I = random<int32_t>(N, 49, -1000000, 1000000);
    std::vector<float> Mx(G, -7), Gmax(1, -1e30f), Count(1, 0.0f);
    std::vector<int32_t> Mn(G, -7);
    std::vector<long long> Gmin(1, (long long)(1) << 62);  // the launchers' i64
    std::vector<uint32_t> Umax(1, 0);
    expectStatus("thread_atomics status" + at,
                 tl_kernels::thread_atomics(X.data(), I.data(), Mx.data(), Mn.data(), Gmax.data(), Gmin.data(),
                                            Umax.data(), Count.data(), N, G),
                 0);
    std::vector<double> mx(G, -1e30), mn(G, double(1 << 30));
    double gmax = -1e30;
    long long gmin = (long long)(1) << 62;
    uint32_t umax = 0;
    for (int i = 0; i < N; ++i) {
        mx[size_t(i / threads)] = std::max(mx[size_t(i / threads)], double(X[size_t(i)]));
        mn[size_t(i / threads)] = std::min(mn[size_t(i / threads)], double(I[size_t(i)]));
        gmax = std::max(gmax, double(X[size_t(i)]));
        gmin = std::min(gmin, (long long)(I[size_t(i)]) * 1000000007LL);
        umax = std::max(umax, uint32_t(I[size_t(i)]) * 2654435761u);
    }
    check("atomic_max f32 (shared)" + at, Mx, mx, 0, 0);
    check("atomic_min i32 (shared)" + at, Mn, mn, 0, 0);
    check("atomic_max f32 (global, release)" + at, Gmax, {gmax}, 0, 0);
    // i64 and u32 extremes compare exactly as integers.
    check("atomic_min i64 (global, seq_cst)" + at, std::vector<int64_t>{Gmin[0] == gmin ? 1 : 0}, {1.0}, 0, 0);
    check("atomic_max u32 (global)" + at, Umax, {double(umax)}, 0, 0);
    check("atomic_add f32 (global, acq_rel)" + at, Count, {double(N)}, 0, 0);
}

// call_extern through tests/run/thread_helpers.h, the functions' definitions written out again.
void externCalls(int N) {
    const std::string at = " " + dims({{"N", N}});
    auto B = random<uint8_t>(N, 50, 0, 255);
    auto S = random<float>(N, 51, 0.5, 2.0);
    std::vector<float> Y(N, -7);
    std::vector<int32_t> Z(N, -7);
    expectStatus("thread_extern status" + at, tl_kernels::thread_extern(B.data(), S.data(), Y.data(), Z.data(), N), 0);
    std::vector<double> y(N), z(N);
    for (int i = 0; i < N; ++i) {
        y[size_t(i)] = double(float((B[size_t(i)] >> (4 * (i % 2))) & 15) * S[size_t(i)]);
        z[size_t(i)] = double((i * 31) ^ (i % 128));
    }
    check("call_extern decode_nibble (parallel loop)" + at, Y, y, 0, 0);
    check("call_extern mix_bits (thread level)" + at, Z, z, 0, 0);
}

// vectorized loops: vector moves on GPUs where the rows are a whole number of vectors (N % 4)
// and the pointers aligned, the general variant's element loops otherwise (N odd, or Y one
// element into its buffer: `shift`).
void vectorLoops(int M, int N, int shift = 0) {
    const std::string at = " " + dims({{"M", M}, {"N", N}, {"shift", shift}});
    auto X = random<float>(size_t(M) * N, 52);
    std::vector<float> Ystore(size_t(M) * N + size_t(shift), -7);
    int status = tl_kernels::thread_vector(X.data(), Ystore.data() + shift, M, N);
    expectStatus("thread_vector status" + at, status, 0);
    std::vector<float> Y(Ystore.begin() + shift, Ystore.end());
    std::vector<double> want(Y.size());
    for (size_t i = 0; i < want.size(); ++i) want[i] = double(X[i]) * 2.0 + 1.0;
    check("thread_vector" + at, Y, want, 1e-6, 1e-6);
}

} // namespace

int main() {
    warpSoftmax(8, 256);
    warpSoftmax(10, 200);
    blockHistogram(4096);
    blockHistogram(5000);
    gemvInt4(1, 1024, 1024);
    gemvInt4(3, 1001, 896);  // a partial block of outputs and a partial k-step
    collectives(512);
    collectives(300);
    votes(512);
    votes(300);
    atomics(512);
    atomics(300);
    externCalls(512);
    externCalls(300);
    vectorLoops(3, 1000);
    vectorLoops(2, 1002);
    vectorLoops(2, 1000, 1);  // Y one element into its buffer
    return summary();
}
